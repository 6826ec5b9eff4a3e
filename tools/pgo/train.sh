#!/bin/sh
# The training run of the PGO build (`make build-pgo`, tools/pgo/build.sh, docs/performance.md
# "The compiler"): runs the instrumented rebalance-sim (-fprofile-generate) on a fixed,
# deterministic workload the repository owns, so the same sources give the same profile:
# - the shape of `bench scale` (its --print-scenario) at 1,000 x 10,000 for 60 virtual s
#   under classic-eager, classic-cooperative and consumer, at the default trace level;
# - the same shape at 100 x 1,000 for 30 virtual s at --trace full with every output format;
# - `check` of the scenario library and the examples, one scenario at a time (every protocol, a
#   share group, static members, fleets and autoscalers, network and broker faults).
# Each run leaves by exit(), which writes the counters of every instrumented object to its .gcda
# file beside the object; the profiles of an earlier training are removed first (the runtime
# would add to them). Fails if the training wrote no profile.
# Usage: tools/pgo/train.sh BUILD_DIR   (from the source folder)
set -eu
build=$1
bin=$build/rebalance-sim
work=$build/pgo-train
find "$build" -name '*.gcda' -delete
rm -rf "$work"
mkdir -p "$work"
protocols="--protocol classic-eager --protocol classic-cooperative --protocol consumer"
"$bin" bench scale --print-scenario --sizes 1000x10000 --virtual-ms 60000 $protocols \
  >"$work/scale-1000x10000.json"
"$bin" bench scale --print-scenario --sizes 100x1000 --virtual-ms 30000 $protocols \
  >"$work/scale-100x1000.json"
"$bin" run "$work/scale-1000x10000.json" --out "$work/scale-1000x10000" --quiet >"$work/run.log"
"$bin" run "$work/scale-100x1000.json" --trace full --format perfetto --format mermaid --format csv \
  --out "$work/scale-100x1000" --quiet >>"$work/run.log"
"$bin" check scenarios/library scenarios/examples --jobs 1 >"$work/check.log"
profiles=$(find "$build" -name '*.gcda' | wc -l)
if [ "$profiles" -eq 0 ]; then
  echo "tools/pgo/train.sh: the training wrote no profile (.gcda) under $build" >&2
  exit 1
fi
echo "tools/pgo/train.sh: $profiles profiles (.gcda) written under $build"
