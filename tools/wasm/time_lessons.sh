#!/usr/bin/env bash
# How long each lesson takes in the page (docs/playground.md, "Measured"), in real headless
# Chromium: the site is served on 127.0.0.1, each lesson opened with ?lesson=NAME&run=1&timing=1,
# and the page logs a console line at each stage of a run (the WebAssembly side after loading the
# scenario, simulating, building the timelines, rendering the report and serializing the result;
# the page after parsing it and once the report is shown). Headless Chromium's virtual time
# stops the page's own clock, so the stages are read from the real-time stamps of Chromium's log.
#   tools/wasm/time_lessons.sh [SITE_DIR [RUNS [LESSON...]]]
# Prints one line per run: the lesson, then each stage's time in ms since the Run press, and
# `shown` = the whole run as the learner sees it. Exit 2 without a built site.
set -euo pipefail
site=${1:-site}
runs=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
[ -f "$site/rsim.wasm" ] || { echo "time_lessons.sh: no $site/rsim.wasm (run \`make site\` first)" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "time_lessons.sh: chromium is missing" >&2; exit 2; }
work=$(mktemp -d)
python3 -u -m http.server 0 --bind 127.0.0.1 -d "$site" > "$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
port=
for _ in $(seq 100); do
  port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$work/server.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "time_lessons.sh: the static server did not start" >&2; exit 2; }
lessons=("$@")
if [ ${#lessons[@]} -eq 0 ]; then
  for f in "$site"/lessons/*.json; do
    n=$(basename "$f" .json)
    [ "$n" = index ] || lessons+=("$n")
  done
fi
echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg); ms since Run was pressed"
for n in "${lessons[@]}"; do
  for _ in $(seq "$runs"); do
    rm -rf "$work/profile"
    "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
      --disable-sync --no-first-run --user-data-dir="$work/profile" --enable-logging=stderr --v=0 \
      --virtual-time-budget=20000 --dump-dom "http://127.0.0.1:$port/index.html?lesson=$n&run=1&timing=1" 2>&1 >/dev/null |
      sed -n -E 's/^\[[0-9:]+\/([0-9]{2})([0-9]{2})([0-9.]+):INFO:CONSOLE[^"]*"rsim-timing ([a-z]+) .*/\1 \2 \3 \4/p' |
      awk -v n="$n" '{ t = $1 * 3600 + $2 * 60 + $3; if (NR == 1) t0 = t; line = line sprintf(" %s=%.0f", $4, (t - t0) * 1000) }
                     END { print n line }'
  done
done
