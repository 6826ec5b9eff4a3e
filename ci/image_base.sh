#!/bin/sh
# Prints the base image `make image` builds from. The one asked for (IMAGE_BASE, by default
# Debian's bookworm-slim from Docker Hub) when it is already in local storage or can be pulled;
# otherwise, where no image registry is reachable, a bookworm made from Debian's own packages with
# mmdebstrap and imported once as localhost/bookworm:mmdebstrap (kept for the next build).
# Usage: ci/image_base.sh [IMAGE_BASE]
set -eu
want=${1:-docker.io/library/debian:bookworm-slim}
local_base=localhost/bookworm:mmdebstrap
have() { buildah inspect --type image "$1" >/dev/null 2>&1; }
if have "$want" || timeout 60 buildah pull --quiet "$want" >/dev/null 2>&1; then
  echo "$want"
  exit 0
fi
echo "image-base: $want is not in local storage and cannot be pulled (no registry reachable?);" \
     "using $local_base, made from Debian's packages with mmdebstrap" >&2
if ! have "$local_base"; then
  command -v mmdebstrap >/dev/null || {
    echo "image-base: mmdebstrap is not installed (apt-get install mmdebstrap)" >&2; exit 2; }
  tar=$(mktemp -d)/bookworm.tar
  trap 'rm -rf "$(dirname "$tar")"' EXIT INT TERM
  mmdebstrap --quiet --variant=apt bookworm "$tar" >&2
  podman import "$tar" "$local_base" >/dev/null
fi
echo "$local_base"
