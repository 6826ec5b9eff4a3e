#!/bin/sh
# Checks a built image without a container runtime (where podman cannot start a container):
# `buildah from` + `buildah mount` reach the image's root file system, and chroot (as root) runs
# its installed binary (the .deb installed by apt-get): `rebalance-sim --version`, `check` on a
# library scenario the image installs (its assertions pass, JUnit written), then `run` on it.
# Usage: ci/image_test.sh IMAGE [COMMIT]   (make image-test); with COMMIT,
# `--version` must name it (the image was built from that commit).
set -eu
image=${1:-rebalance-sim}
commit=${2:-}
scenario=/usr/share/rebalance-sim/scenarios/library/crash.json
ctr=$(buildah from --pull-never "$image")
cleanup() { buildah umount "$ctr" >/dev/null 2>&1 || true; buildah rm "$ctr" >/dev/null 2>&1 || true; }
trap cleanup EXIT INT TERM
root=$(buildah mount "$ctr")
version=$(chroot "$root" rebalance-sim --version)
echo "$version"
case "$version" in *"($commit)"*|*"($commit-"*) ;; *)
  [ -z "$commit" ] || { echo "image-test: --version does not name commit $commit" >&2; exit 1; } ;;
esac
rm -rf "$root/tmp/image-test"
chroot "$root" rebalance-sim check "$scenario" --junit /tmp/image-test.xml
grep -q '<testsuites' "$root/tmp/image-test.xml" || { echo "image-test: check wrote no JUnit" >&2; exit 1; }
chroot "$root" rebalance-sim run "$scenario" --out /tmp/image-test --quiet
for f in report.html classic-eager/summary.json classic-eager/trace.jsonl; do
  [ -s "$root/tmp/image-test/$f" ] || { echo "image-test: $f missing from the run's outputs" >&2; exit 1; }
done
echo "image-test: $image runs rebalance-sim --version, check and run on $scenario"
