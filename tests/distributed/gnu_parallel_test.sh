#!/bin/sh
# ctest: a sweep spread over GNU parallel (3 shards on 2 job slots) merges to exactly the bytes of
# the unsharded sweep.  Usage: gnu_parallel_test.sh BINARY SOURCE_DIR WORK_DIR
set -eu
bin=$1
src=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
cd "$src"
set -- scenarios/examples/two-consumers.json \
  --vary '/consumers/*/config/session.timeout.ms=10000,20000' \
  --vary '/cluster/config/group.initial.rebalance.delay.ms=0..3000:3000' --seeds 1..4
JOBS=2 sh tools/distributed/gnu-parallel-sweep.sh "$bin" 3 "$work/parallel" "$@"
"$bin" sweep "$@" --quiet --out "$work/whole"
ls "$work/parallel/shards"
diff -r "$work/whole" "$work/parallel/sweep"
echo "GNU parallel: 3 shards merged = unsharded sweep, byte for byte ($(find "$work/whole" -type f | wc -l) files)"
