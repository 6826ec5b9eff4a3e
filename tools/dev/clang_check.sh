#!/usr/bin/env bash
# A quick stand-in for the sanitize build's compiler: Clang 14 with -Werror, syntax only, over the
# C++ files changed since a base commit (default: main), using build/compile_commands.json for each
# file's flags. Headers are checked through the sources that include them. Exit 1 on an error.
#   tools/dev/clang_check.sh [BASE] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
base="${1:-main}"
build="${2:-build}"
[ -f "$build/compile_commands.json" ] || { echo "clang_check: no $build/compile_commands.json; configure first" >&2; exit 2; }
files=$(git diff --name-only "$base" -- '*.cpp' '*.hpp' | while read -r f; do if [ -f "$f" ]; then echo "$f"; fi; done)
[ -n "$files" ] || { echo "clang_check: no C++ file changed since $base"; exit 0; }
python3 - "$build/compile_commands.json" $files <<'PY'
import json, os, shlex, subprocess, sys
db = json.load(open(sys.argv[1]))
by_file = {os.path.realpath(e["file"]): e for e in db}
changed = [os.path.realpath(f) for f in sys.argv[2:]]
sources = [f for f in changed if f.endswith(".cpp")]
headers = [f for f in changed if f.endswith(".hpp")]
# A changed header is checked through one source of the database that names it.
for h in headers:
    name = os.path.basename(h)
    for f in by_file:
        try:
            if name in open(f, errors="replace").read():
                sources.append(f)
                break
        except OSError:
            pass
failed = 0
for src in sorted(set(sources)):
    e = by_file.get(src)
    if e is None:
        print(f"clang_check: {src} is not in the compile database (not built?)")
        continue
    args = e.get("arguments") or shlex.split(e["command"])
    flags = [a for a in args[1:] if a.startswith(("-I", "-D", "-std", "-isystem")) or a in ("-isystem",)]
    # keep "-isystem DIR" pairs
    out, i = [], 1
    while i < len(args):
        a = args[i]
        if a in ("-isystem", "-I", "-D", "-include") and i + 1 < len(args):
            out += [a, args[i + 1]]; i += 2; continue
        if a.startswith(("-I", "-D", "-std", "-isystem")):
            out.append(a)
        i += 1
    cmd = ["clang++", "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Wpedantic",
           "-Wno-missing-field-initializers", "-Werror"] + out + [src]
    r = subprocess.run(cmd, cwd=e["directory"], capture_output=True, text=True)
    if r.returncode != 0:
        failed += 1
        print(r.stderr)
print(f"clang_check: {len(set(sources))} files, {failed} with errors")
sys.exit(1 if failed else 0)
PY
