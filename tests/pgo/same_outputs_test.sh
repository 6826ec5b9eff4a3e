#!/bin/sh
# The PGO binary (`make build-pgo`) against the Release binary of the same sources (`make build`):
# neither optimisation changes floating-point arithmetic, so every output must be the same bytes.
# 8 scenarios (two examples; a crash; a fleet autoscaler; a share group; an online migration; a
# static member fenced; the shape of `bench scale` at 100 x 1,000 for 30 virtual s under the three
# protocols, printed by `bench scale --print-scenario`), each at --trace standard and full with every format,
# through tools/same_outputs.sh. Fails as well when the two binaries are the same bytes, or when
# the PGO binary is still the instrumented one (it would write profiles).
# Usage: tests/pgo/same_outputs_test.sh PGO_BINARY RELEASE_BINARY WORK_DIR   (from the source folder)
set -eu
pgo=$1 release=$2 work=$3
[ -x "$release" ] || { echo "no Release binary at $release (make build)"; exit 1; }
if cmp -s "$pgo" "$release"; then
  echo "$pgo and $release are the same bytes: not a PGO build"
  exit 1
fi
if grep -q __gcov_merge "$pgo"; then
  echo "$pgo is the instrumented binary (-fprofile-generate), not the build with the profile"
  exit 1
fi
rm -rf "$work"
mkdir -p "$work"
"$release" bench scale --print-scenario --sizes 100x1000 --virtual-ms 30000 \
  --protocol classic-eager --protocol classic-cooperative --protocol consumer >"$work/scale-100x1000.json"
scenarios="scenarios/examples/two-consumers.json scenarios/examples/two-consumers-kip848.json
  scenarios/library/crash.json scenarios/library/fleet-autoscaling-storm.json
  scenarios/share/eight-consumers-one-crash.json scenarios/migration/online-upgrade-and-downgrade.json
  scenarios/classic/static-fenced-instance.json $work/scale-100x1000.json"
n=$(echo $scenarios | wc -w)
for level in standard full; do
  SCENARIOS=$scenarios sh tools/same_outputs.sh "$release" "$pgo" $level "$work/$level" >"$work/$level.log"
  cat "$work/$level.log"
  grep -q "^$n scenarios identical, 0 different (level $level)\$" "$work/$level.log" || exit 1
  if grep -h '^exit ' "$work/$level"/*.err | grep -qv '^exit 0$'; then
    echo "a scenario failed to run at --trace $level:"
    grep -l -v '^exit 0$' "$work/$level"/*.err
    exit 1
  fi
done
files=$(find "$work/standard/new" "$work/full/new" -type f | wc -l)
echo "$n scenarios at --trace standard and full, $files files: the same bytes from both binaries"
