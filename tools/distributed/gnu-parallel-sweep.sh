#!/bin/sh
# A sweep spread over GNU parallel's job slots, then merged: the same bytes as the unsharded sweep.
#
#   tools/distributed/gnu-parallel-sweep.sh BINARY N OUT SCENARIO SWEEP-ARGS...
#
# runs `BINARY sweep SCENARIO SWEEP-ARGS --shard I/N` for I = 1..N (JOBS slots at a time, default 2)
# into OUT/shards/, then `BINARY merge OUT/shards/shard-*-of-N.json --out OUT/sweep`. Across hosts,
# give GNU parallel the machines (each needs the binary and the scenario at the same paths) and
# have it bring the shard files back:
#   PARALLEL_HOSTS="--sshlogin 2/host1,2/host2 --return {#}.json ..." (see docs/sweep.md)
set -eu
if [ $# -lt 4 ]; then
  echo "usage: $0 BINARY N OUT SCENARIO SWEEP-ARGS..." >&2
  exit 2
fi
bin=$1
n=$2
out=$3
shift 3
command -v parallel >/dev/null || { echo "$0: GNU parallel is not installed (Debian: apt-get install parallel)" >&2; exit 2; }
rm -rf "$out/shards"
mkdir -p "$out/shards"
# -q: the sweep's arguments reach it as they are (a PATH with * is not a shell glob).
seq 1 "$n" | parallel -q --halt now,fail=1 -j "${JOBS:-2}" ${PARALLEL_HOSTS:-} \
  "$bin" sweep "$@" --shard "{}/$n" --out "$out/shards" --quiet
"$bin" merge "$out"/shards/shard-*-of-"$n".json --out "$out/sweep"
