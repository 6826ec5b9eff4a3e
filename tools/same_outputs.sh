#!/bin/sh
# Runs every scenario under scenarios/ with two rebalance-sim binaries at one trace level (all
# formats) and compares their outputs byte for byte. The commit in produced_by / --version and
# run.start's trace_level (which older binaries do not write; also in timeline.csv) are set aside.
# The output folder's manifest (.rebalance-sim-manifest.json, which older binaries do not write) is not compared.
# Usage: tools/same_outputs.sh OLD_BINARY NEW_BINARY [LEVEL] [WORKDIR]
# SCENARIOS="a.json b.json ..." runs those instead of every scenario (tests/pgo/same_outputs_test.sh).
set -u
old=$1 new=$2 level=${3:-full} work=${4:-$(mktemp -d)}
oc=$("$old" --version | sed -n 's/.*(\([0-9a-f]*\)).*/\1/p')
nc=$("$new" --version | sed -n 's/.*(\([0-9a-f]*\)).*/\1/p')
mkdir -p "$work/old" "$work/new"
same=0 differ=0
for f in ${SCENARIOS:-$(find scenarios -name '*.json' ! -name schema.json ! -name '*.golden.json' ! -path '*/assign/*' | sort)}; do
  n=$(echo "$f" | tr / _)
  for side in old new; do
    bin=$old; [ $side = new ] && bin=$new
    rm -rf "$work/$side/$n"
    nice "$bin" run "$f" --trace "$level" --format perfetto --format mermaid --format csv --quiet \
      --out "$work/$side/$n" >/dev/null 2>"$work/$side.$n.err"
    echo "exit $?" >>"$work/$side.$n.err"
    find "$work/$side/$n" -type f | while read -r x; do
      sed -i -e "s/$oc/COMMIT/g" -e "s/$nc/COMMIT/g" -e 's/,"trace_level":"[a-z]*"}/}/' \
        -e 's/,""trace_level"":""[a-z]*""}/}/' "$x"
    done
  done
  if diff -r -x .rebalance-sim-manifest.json "$work/old/$n" "$work/new/$n" >/dev/null && cmp -s "$work/old.$n.err" "$work/new.$n.err"; then
    same=$((same + 1))
  else
    differ=$((differ + 1)); echo "DIFFERENT: $f"
  fi
done
echo "$same scenarios identical, $differ different (level $level)"
