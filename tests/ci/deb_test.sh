#!/bin/sh
# The .deb from CPack: built, its contents listed, unpacked with dpkg -x into a temporary root (no
# change to this machine), and the unpacked binary runs `check` on an unpacked library scenario.
# Its Depends (dpkg-shlibdeps) names the shared libraries the binary needs.
#   deb_test.sh BUILD_DIR WORK_DIR
set -eu
build=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
cmake --build "$build" --target man_page > "$work/build.log"
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" > cpack.log 2>&1) || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/rebalance-sim_*.deb)
dpkg-deb --info "$deb" > "$work/info.txt"
grep -q "Package: rebalance-sim" "$work/info.txt"
grep -q "Depends:.*libmimalloc" "$work/info.txt" || { echo "Depends lacks mimalloc:"; cat "$work/info.txt"; exit 1; }
dpkg-deb --contents "$deb" > "$work/contents.txt"
for f in ./usr/bin/rebalance-sim ./usr/share/man/man1/rebalance-sim.1.gz ./usr/share/rebalance-sim/scenarios/schema.json \
         ./usr/share/rebalance-sim/scenarios/library/crash.json ./usr/share/doc/rebalance-sim/ci.md; do
  grep -q " $f\$" "$work/contents.txt" || grep -q " ${f%.gz}\$" "$work/contents.txt" || { echo "the .deb lacks $f"; exit 1; }
done
dpkg -x "$deb" "$work/root"
"$work/root/usr/bin/rebalance-sim" --version
"$work/root/usr/bin/rebalance-sim" check "$work/root/usr/share/rebalance-sim/scenarios/library/crash.json" \
  --junit-time zero --junit "$work/junit.xml" > "$work/check.txt"
grep -q " 0 failed" "$work/check.txt" || { cat "$work/check.txt"; exit 1; }
echo "$(basename "$deb"): installs (dpkg -x) and its binary checked library/crash.json"
