#!/bin/sh
# The house style (.clang-format, docs/STYLE.md) over every C++ file of the repository.
#   tools/dev/format.sh          reformat the files in place (`make format`)
#   tools/dev/format.sh --check  change nothing; list the files that differ and exit 1 if any
#                                (ctest "lint: the C++ tree is formatted as .clang-format says")
# Needs clang-format-14 (Debian's package of that name, installed by `make test`).
set -eu
# FORMAT_ROOT: another tree with its own .clang-format (the gate's own test).
root=${FORMAT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"
fmt=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$fmt" >/dev/null 2>&1; then
  echo "format.sh: $fmt not found (apt-get install clang-format-14, or set CLANG_FORMAT)" >&2
  exit 2
fi
files=$(find sim models reports tools tests -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) \
          -not -path 'tools/kafka-oracle/*' | LC_ALL=C sort)
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in $files; do
    if ! "$fmt" --style=file "$f" | cmp -s - "$f"; then
      echo "not formatted: $f (run tools/dev/format.sh, or make format)"
      bad=1
    fi
  done
  [ $bad -eq 0 ] && echo "formatted: $(echo "$files" | wc -l) files"
  exit $bad
fi
echo "$files" | xargs "$fmt" --style=file -i
