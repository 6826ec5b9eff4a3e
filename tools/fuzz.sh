#!/usr/bin/env bash
# A bounded libFuzzer run of both targets (tests/fuzz/): the scenario loader, seeded with every
# scenario under scenarios/, and the command-line parser, seeded with the README's command lines.
# FUZZ_SECONDS per target (default 120). Prints libFuzzer's figures; exits non-zero on a finding.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${FUZZ_SECONDS:-120}"
BUILD=build-fuzz
# -O1 without debug info: the usual libFuzzer build, and quick to compile.
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS=-O1 -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DREBALANCE_SIM_FUZZ=ON > /dev/null
cmake --build "$BUILD" -j "$(nproc)" --target fuzz_scenario_loader fuzz_cli_args
corpus="$BUILD/corpus"
mkdir -p "$corpus/loader" "$corpus/cli" "$BUILD/findings"
find scenarios -name '*.json' ! -name schema.json -exec cp {} "$corpus/loader/" \;
n=0
while IFS= read -r line; do
  n=$((n + 1))
  # One argument list per file, NUL-separated.
  printf '%s' "$line" | tr ' ' '\0' > "$corpus/cli/seed-$n"
done <<'ARGS'
run scenarios/examples/two-consumers.json --protocol classic-eager --seed 7 --out out/x
run scenarios/examples/two-consumers.json --check-determinism --max-events 1000
check scenarios/ --junit results.xml
validate my-scenario.json
explore scenarios/explore/two-groups-short.json --seeds 1..200 --jobs 2
shrink out/explore/two-groups-short/seed-17.json --protocol consumer
describe scenarios/examples/two-consumers.json --at 12000 --members --verbose
dump-log scenarios/examples/two-consumers.json --partition 18
bench kernel --events 20000000
assign scenarios/assign/uniform-heterogeneous.json --json
ARGS
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
for target in fuzz_scenario_loader fuzz_cli_args; do
  dir=loader
  [ "$target" = fuzz_cli_args ] && dir=cli
  echo "== $target: $SECONDS_PER_TARGET s"
  "$BUILD/$target" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$BUILD/findings/$target-" "$corpus/$dir" 2>&1 |
    grep -E '^(#[0-9]+.*(INITED|DONE)|stat::number_of_executed_units|stat::new_units_added|==[0-9]+==ERROR|SUMMARY|Done)' || true
  if ls "$BUILD/findings/$target-"* > /dev/null 2>&1; then
    echo "$target: findings in $BUILD/findings/" >&2
    exit 1
  fi
done
