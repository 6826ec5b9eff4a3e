#!/bin/sh
# The JUnit XML of `check` validates against tests/ci/junit.xsd (the common junit-10 shape CI
# dashboards read): a run with a passing assertion, a failing one, a warning (nothing to check)
# and a scenario that does not load (an <error>), under each --junit-time.
#   junit_xsd.sh BINARY SOURCE_DIR WORK_DIR
set -eu
bin=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work/s"
cp "$src/scenarios/examples/two-consumers.json" "$work/s/a-passes.json"
printf '{"name": "fails", "duration_ms": 5000, "protocols": ["classic-eager"], "topics": [{"name": "t", "partitions": 2}], "consumers": [{"name": "A", "group": "g", "topics": ["t"]}], "events": [{"at_ms": 0, "do": "start", "consumer": "A"}], "expect": [{"id": "two-rebalances", "metric": "rebalance_count", "op": "==", "value": 2}, {"metric": "lost", "op": "==", "value": 0}]}\n' > "$work/s/b-fails.json"
printf '{"name": "bad", "topics": [{"name": "t", "partitions": 0}]}\n' > "$work/s/c-invalid.json"
printf '{"name": "quiet", "duration_ms": 1000, "protocols": ["classic-eager"], "topics": [{"name": "t", "partitions": 1}], "consumers": [{"name": "A", "group": "g", "topics": ["t"]}], "events": [{"at_ms": 0, "do": "start", "consumer": "A"}]}\n' > "$work/s/d-quiet.json"
for mode in wall virtual zero; do
  set +e
  "$bin" check "$work/s" --junit-time $mode --junit "$work/junit-$mode.xml" > "$work/out-$mode.txt" 2>&1
  code=$?
  set -e
  [ $code -eq 2 ] || { echo "check exited $code, expected 2 (an invalid scenario)"; cat "$work/out-$mode.txt"; exit 1; }
  xmllint --noout --schema "$src/tests/ci/junit.xsd" "$work/junit-$mode.xml"
  for part in '<error message=' '<failure message=' '<skipped message=' 'errors="1"'; do
    grep -q "$part" "$work/junit-$mode.xml" || { echo "junit-$mode.xml has no $part"; exit 1; }
  done
done
# The schema is not a rubber stamp: the old shape (skipped on <testsuites>, a text time) fails it.
sed 's/<testsuites name="rebalance-sim check"/<testsuites skipped="1" name="rebalance-sim check"/' "$work/junit-zero.xml" > "$work/bad.xml"
if xmllint --noout --schema "$src/tests/ci/junit.xsd" "$work/bad.xml" 2>/dev/null; then echo "bad.xml validated"; exit 1; fi
sed 's/time="0.000"/time="480 s"/' "$work/junit-zero.xml" > "$work/bad2.xml"
if xmllint --noout --schema "$src/tests/ci/junit.xsd" "$work/bad2.xml" 2>/dev/null; then echo "bad2.xml validated"; exit 1; fi
echo "junit validates against junit.xsd (wall, virtual, zero)"
