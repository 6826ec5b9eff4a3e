#!/bin/sh
# The PGO build (`make build-pgo`, docs/performance.md "The compiler"), in BUILD_DIR:
# 1. g++ compiles the libraries a run spends its time in (sim, assignors, trace, models, reports)
#    with -fprofile-generate and links rebalance-sim;
# 2. tools/pgo/train.sh runs it on a fixed workload the repository owns (the profile: .gcda files);
# 3. g++ compiles those libraries again with -fprofile-use and links rebalance-sim;
# 4. ctest -L pgo: it writes the bytes of the Release binary RELEASE_BINARY (`make build`) at
#    --trace standard and full on a handful of scenarios (tests/pgo/same_outputs_test.sh).
# Both compiles of those libraries go without the compiler cache (CMakeLists.txt). Prints each
# step's wall time.
# Usage: tools/pgo/build.sh BUILD_DIR RELEASE_BINARY JOBS   (from the source folder)
set -eu
build=$1 release=$2 jobs=$3
step() {
  name=$1
  shift
  echo "== build-pgo: $name"
  start=$(date +%s)
  "$@"
  echo "== build-pgo: $name took $(($(date +%s) - start)) s"
}
step "instrumented build" sh -c "cmake -S . -B '$build' -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DREBALANCE_SIM_PGO=generate -DREBALANCE_SIM_PGO_REFERENCE='$release' >/dev/null && \
  cmake --build '$build' -j '$jobs' --target rebalance-sim"
step "training" sh tools/pgo/train.sh "$build"
step "build with the profile" sh -c "cmake -S . -B '$build' -DREBALANCE_SIM_PGO=use >/dev/null && \
  cmake --build '$build' -j '$jobs' --target rebalance-sim"
step "test against the Release binary" sh -c "cd '$build' && ctest --output-on-failure -L pgo"
echo "build-pgo: $build/rebalance-sim"
