#!/usr/bin/env bash
# A bounded libFuzzer run of the five targets (tests/fuzz/): the scenario loader, seeded with
# every scenario under scenarios/; the command-line parser, seeded with the README's command
# lines; the timeline's trace reader, seeded with the first lines of the recorded real runs'
# traces (fidelity/real/); the run-folder reader of `report` (a summary.json, a NUL, a
# trace.jsonl), seeded with those lines after an empty and a small summary; the recording reader
# of `compare`, seeded with the same first lines. They run side by side, FUZZ_SECONDS each
# (default 120), so the whole run takes FUZZ_SECONDS of wall time. Prints libFuzzer's figures; exits
# non-zero on a finding. `make fuzz` builds the targets first (the sanitizer build, BUILD).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${FUZZ_SECONDS:-120}"
BUILD="${BUILD:-build-sanitize}"
TARGETS="fuzz_scenario_loader fuzz_cli_args fuzz_trace_reader fuzz_run_folder fuzz_recording_reader"
for target in $TARGETS; do
  if [ ! -x "$BUILD/$target" ]; then
    echo "fuzz.sh: $BUILD/$target is not built; run \`make fuzz\`" >&2
    exit 2
  fi
done
corpus="$BUILD/corpus"
mkdir -p "$corpus/loader" "$corpus/cli" "$corpus/trace" "$corpus/folder" "$corpus/recording" "$BUILD/findings"
find scenarios -name '*.json' ! -name schema.json -exec cp {} "$corpus/loader/" \;
n=0
for trace in $(find fidelity/real -name trace.jsonl ! -path '*/run-2/*' | sort); do
  n=$((n + 1))
  head -n 60 "$trace" > "$corpus/trace/seed-$n"
  { head -n 60 "$trace"; tail -n 1 "$trace"; } > "$corpus/recording/seed-$n"  # ends with run.end
  { printf '{}\0'; head -n 60 "$trace"; } > "$corpus/folder/seed-$n"
  { printf '{"scenario":"s","protocol":"classic-eager","seed":1,"metrics":{"rebalance_count":1},"rebalances":[{"group":"g","start_us":0,"end_us":5000000,"trigger":"t","generation":1,"completed":true,"revoked":{},"assigned":{"A":["orders-0"]}}]}\0'
    head -n 60 "$trace"; } > "$corpus/folder/seed-summary-$n"
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
for target in $TARGETS; do
  dir=loader
  [ "$target" = fuzz_cli_args ] && dir=cli
  [ "$target" = fuzz_trace_reader ] && dir=trace
  [ "$target" = fuzz_run_folder ] && dir=folder
  [ "$target" = fuzz_recording_reader ] && dir=recording
  "$BUILD/$target" -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$BUILD/findings/$target-" "$corpus/$dir" \
      > "$BUILD/$target.log" 2>&1 &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
for target in $TARGETS; do
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
