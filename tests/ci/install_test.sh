#!/bin/sh
# `cmake --install` into a temporary prefix: the binary, the man page (made from --help), the
# schema next to the installed scenarios, the docs and CI templates; the installed binary checks
# an installed library scenario, whose "$schema" ("../schema.json") resolves to the installed schema.
#   install_test.sh BUILD_DIR WORK_DIR
set -eu
build=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
cmake --build "$build" --target man_page > "$work/build.log"
cmake --install "$build" --prefix "$work/usr" > "$work/install.log"
root=$work/usr
for f in bin/rebalance-sim share/man/man1/rebalance-sim.1 share/rebalance-sim/scenarios/schema.json \
         share/rebalance-sim/scenarios/library/crash.json share/doc/rebalance-sim/ci.md \
         share/doc/rebalance-sim/README.md share/doc/rebalance-sim/ci/action.yml \
         share/doc/rebalance-sim/ci/rebalance-sim.gitlab-ci.yml share/doc/rebalance-sim/ci/Containerfile; do
  [ -e "$root/$f" ] || { echo "not installed: $f"; exit 1; }
done
# The man page holds every subcommand's --help.
for section in '.SS check' '.SS run' '.SS report' '--max-regression METRIC=+N%' '--junit-time' 'Usage: rebalance-sim check'; do
  grep -qF -- "$section" "$root/share/man/man1/rebalance-sim.1" || { echo "man page lacks $section"; exit 1; }
done
if command -v man > /dev/null; then MANWIDTH=100 man -l "$root/share/man/man1/rebalance-sim.1" > "$work/man.txt" 2>/dev/null || true; fi
schema=$(grep -o '"\$schema": *"[^"]*"' "$root/share/rebalance-sim/scenarios/library/crash.json" | sed 's/.*: *"//; s/"$//')
[ -f "$root/share/rebalance-sim/scenarios/library/$schema" ] || { echo "\$schema $schema does not resolve"; exit 1; }
"$root/bin/rebalance-sim" check "$root/share/rebalance-sim/scenarios/library/crash.json" --junit-time zero \
  --junit "$work/junit.xml" > "$work/check.txt"
grep -q " 0 failed" "$work/check.txt" || { cat "$work/check.txt"; exit 1; }
echo "installed under $root; the installed binary checked library/crash.json"
