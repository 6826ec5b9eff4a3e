#!/usr/bin/env bash
# make site: assembles the static site from the WebAssembly build and the page's sources.
#   tools/wasm/make_site.sh BUILD_WASM_DIR SITE_DIR
# SITE_DIR gets index.html, playground.{js,css}, editor.js, schema.json, rsim.{js,wasm}, commit.txt and lessons/ (every
# scenario of scenarios/lessons/ and index.json, their names sorted). Any static host serves the folder.
set -euo pipefail
build=$1 site=$2
src="$(cd "$(dirname "$0")/../.." && pwd)"
for f in "$build/rsim.js" "$build/rsim.wasm"; do
  [ -f "$f" ] || { echo "make_site.sh: $f is missing (the WebAssembly build failed?)" >&2; exit 2; }
done
rm -rf "$site"
mkdir -p "$site/lessons"
cp "$src/tools/wasm/site/index.html" "$src/tools/wasm/site/playground.js" "$src/tools/wasm/site/playground.css" \
   "$src/tools/wasm/site/editor.js" "$build/rsim.js" "$build/rsim.wasm" "$site/"
# The editor's key hints read the project's JSON schema.
cp "$src/scenarios/schema.json" "$site/schema.json"
names=()
for f in "$src"/scenarios/lessons/*.json; do
  cp "$f" "$site/lessons/"
  names+=("$(basename "$f" .json)")
done
{
  printf '['
  sep=''
  for n in "${names[@]}"; do printf '%s"%s"' "$sep" "$n"; sep=', '; done
  printf ']\n'
} > "$site/lessons/index.json"
# The commit the WebAssembly build was made from (its summary.json's produced_by.commit): the
# browser test compares the site only with a rebalance-sim built from the same commit.
sed -n 's/.*kCommit = "\(.*\)";/\1/p' "$build/generated/build_info.hpp" > "$site/commit.txt"
bytes=$(cat "$site"/*.html "$site"/*.js "$site"/*.css "$site"/*.wasm "$site"/schema.json | wc -c)
echo "site: $site ($(du -sh "$site" | cut -f1); wasm+js+html+css+schema $bytes bytes; ${#names[@]} lessons)"
