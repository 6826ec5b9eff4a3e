#!/usr/bin/env bash
# A bounded libFuzzer run of the three targets (tests/fuzz/): the scenario loader, seeded with
# every scenario under scenarios/; the command-line parser, seeded with the README's command
# lines; the timeline's trace reader, seeded with the first lines of the recorded real runs'
# traces (fidelity/real/). They run side by side, FUZZ_SECONDS each (default 120). Prints libFuzzer's figures; exits
# non-zero on a finding. `make fuzz` builds the targets first (the sanitizer build, BUILD).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${FUZZ_SECONDS:-120}"
BUILD="${BUILD:-build-sanitize}"
for target in fuzz_scenario_loader fuzz_cli_args fuzz_trace_reader; do
  if [ ! -x "$BUILD/$target" ]; then
    echo "fuzz.sh: $BUILD/$target is not built; run \`make fuzz\`" >&2
    exit 2
  fi
done
corpus="$BUILD/corpus"
mkdir -p "$corpus/loader" "$corpus/cli" "$corpus/trace" "$BUILD/findings"
find scenarios -name '*.json' ! -name schema.json -exec cp {} "$corpus/loader/" \;
n=0
for trace in $(find fidelity/real -name trace.jsonl ! -path '*/run-2/*' | sort); do
  n=$((n + 1))
  head -n 60 "$trace" > "$corpus/trace/seed-$n"
done
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
rm -f "$BUILD/findings/"*
pids=()
for target in fuzz_scenario_loader fuzz_cli_args fuzz_trace_reader; do
  dir=loader
  [ "$target" = fuzz_cli_args ] && dir=cli
  [ "$target" = fuzz_trace_reader ] && dir=trace
  "$BUILD/$target" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$BUILD/findings/$target-" "$corpus/$dir" \
      > "$BUILD/$target.log" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
for target in fuzz_scenario_loader fuzz_cli_args fuzz_trace_reader; do
  echo "== $target: $SECONDS_PER_TARGET s (log: $BUILD/$target.log)"
  grep -E '^(#[0-9]+.*(INITED|DONE)|stat::number_of_executed_units|stat::new_units_added|==[0-9]+==ERROR|SUMMARY|Done)' \
      "$BUILD/$target.log" || true
  if ls "$BUILD/findings/$target-"* > /dev/null 2>&1; then
    echo "$target: findings in $BUILD/findings/" >&2
    status=1
  fi
done
if [ "$status" != 0 ]; then
  echo "fuzz.sh: a target failed; see the logs above" >&2
fi
exit "$status"
