#!/bin/sh
# The format gate can fail: on a tiny tree with the house .clang-format, a formatted file passes
# and a badly indented one is named and fails the check (exit 1).
set -eu
gate=$1
style=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/models" "$tmp/sim" "$tmp/reports" "$tmp/tools" "$tmp/tests"
cp "$style" "$tmp/.clang-format"
printf 'int f(int x) {\n  return x + 1;\n}\n' > "$tmp/models/good.cpp"
FORMAT_ROOT=$tmp "$gate" --check > "$tmp/out1" || { echo "a formatted tree failed:"; cat "$tmp/out1"; exit 1; }
grep -q '^formatted: 1 files$' "$tmp/out1" || { echo "unexpected: $(cat "$tmp/out1")"; exit 1; }
printf 'int g(int x)\n{\n        return x+1;\n}\n' > "$tmp/models/bad.cpp"
if FORMAT_ROOT=$tmp "$gate" --check > "$tmp/out2"; then echo "the gate passed an unformatted file"; exit 1; fi
grep -q '^not formatted: models/bad.cpp ' "$tmp/out2" || { echo "unexpected: $(cat "$tmp/out2")"; exit 1; }
if grep -q 'good.cpp' "$tmp/out2"; then echo "the gate named a formatted file"; exit 1; fi
echo "format gate: passes a formatted file, fails on models/bad.cpp"
