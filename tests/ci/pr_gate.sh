#!/bin/sh
# The pull-request gate of docs/ci.md, end to end: the base branch's results (`check --json`),
# then the PR's scenarios checked against them (`--baseline`), with the scenario's tolerance
# `"max_unavailable_ms": "+10%"`:
#   - base: C crashes at 20 s; the coordinator expires it session.timeout.ms (10000) after its last
#     heartbeat and A and B, heartbeating every 100 ms, rejoin at their next heartbeat: C's
#     partitions stop 9931.721 ms (max_unavailable_ms);
#   - a PR raising session.timeout.ms to 11120 moves the expiry 1120 ms later and the rejoin to the
#     heartbeat after it: 11135.705 ms, +1203.984 ms, +12.1 %: it fails at +10 % (exit 1) and passes
#     with --max-regression max_unavailable_ms=+15%;
#   - a PR lowering it to 8000 is faster (8027.809 ms, -19.2 %): it passes, even at +0% (an
#     improvement never fails).
#   pr_gate.sh BINARY SOURCE_DIR WORK_DIR
set -eu
bin=$1 src=$2 work=$3
gate=$src/tests/ci/gate
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAILED: $*"; exit 1; }
expect_code() { # expected-code name command...
  want=$1 name=$2; shift 2
  set +e
  "$@" > "$work/$name.txt" 2>&1
  code=$?
  set -e
  cat "$work/$name.txt"
  [ "$code" -eq "$want" ] || fail "$name exited $code, expected $want"
}
has() { grep -qF -- "$2" "$work/$1" || fail "$1 lacks: $2"; }

# 1. The base branch: its results are the baseline.
expect_code 0 base "$bin" check "$gate/base" --json "$work/base.json"
# 2. A PR 12 % slower: fails at the scenario's +10 %.
expect_code 1 slower "$bin" check "$gate/pr-slower" --baseline "$work/base.json" --markdown "$work/slower.md" \
  --junit "$work/slower.xml"
has slower.txt "REGRESSED orders-crash                 classic-cooperative max_unavailable_ms                 9931.721      11135.705      +1203.984   +12.1% +10%"
has slower.txt "FAIL orders-crash [classic-cooperative] regressed: max_unavailable_ms"
has slower.md "| :x: | orders-crash | classic-cooperative | \`max_unavailable_ms\` | 9931.721 | 11135.705 | +1203.984 | +12.1% | +10% |"
has slower.md "| :white_check_mark: | orders-crash | classic-cooperative | \`duplicates\` | 0 | 0 | 0 | 0% | +0 |"
has slower.xml "<testcase classname=\"orders-crash.classic-cooperative\" name=\"regression max_unavailable_ms\""
# 3. The same PR at +15 % passes.
expect_code 0 slower-15 "$bin" check "$gate/pr-slower" --baseline "$work/base.json" --max-regression max_unavailable_ms=+15%
has slower-15.txt "ok        orders-crash                 classic-cooperative max_unavailable_ms                 9931.721      11135.705      +1203.984   +12.1% +15%"
# 4. A faster PR passes, at any tolerance.
expect_code 0 faster "$bin" check "$gate/pr-faster" --baseline "$work/base.json" --max-regression max_unavailable_ms=+0% \
  --markdown "$work/faster.md"
has faster.txt "improved  orders-crash                 classic-cooperative max_unavailable_ms                 9931.721       8027.809      -1903.912   -19.2% +0%"
echo "pull-request gate: base, 12 % slower (fails at +10 %, passes at +15 %), faster (passes)"
