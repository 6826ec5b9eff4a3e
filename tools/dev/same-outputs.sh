#!/usr/bin/env bash
# Runs every scenario of scenarios/ (each of its protocols) with two rebalance-sim binaries and
# compares what they write: trace.jsonl at --trace full and at the default level, summary.json and
# report.html. The only line allowed to differ is summary.json's "commit" (the binary's own).
#   tools/dev/same-outputs.sh OLD_BINARY NEW_BINARY [SCENARIO_DIR]
# Prints one line per scenario that differs and a total; exit 1 if any differs.
set -uo pipefail
old=$1 new=$2 dir=${3:-scenarios}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
same=0 differ=0 skipped=0
while IFS= read -r f; do
  case "$f" in */schema.json|*/assign/*) continue ;; esac
  for level in full standard; do
    a="$work/a" b="$work/b"
    rm -rf "$a" "$b"
    "$old" run "$f" --out "$a" --trace "$level" --quiet >/dev/null 2>&1; ra=$?
    "$new" run "$f" --out "$b" --trace "$level" --quiet >/dev/null 2>&1; rb=$?
    if [ "$ra" -eq 2 ] && [ "$rb" -eq 2 ]; then skipped=$((skipped + 1)); continue; fi
    if [ "$ra" -ne "$rb" ]; then echo "DIFFERS $f ($level): exit $ra vs $rb"; differ=$((differ + 1)); continue; fi
    if diff -r -q -x .rebalance-sim-manifest.json -I '"commit": ' "$a" "$b" >/dev/null; then
      same=$((same + 1))
    else
      echo "DIFFERS $f ($level):"; diff -r -q -x .rebalance-sim-manifest.json -I '"commit": ' "$a" "$b" | head -5
      differ=$((differ + 1))
    fi
  done
done < <(find "$dir" -name '*.json' | sort)
echo "same-outputs: $same scenario runs byte-identical, $differ differ, $skipped refused by both"
[ "$differ" -eq 0 ]
