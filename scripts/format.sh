#!/usr/bin/env bash
# Applies .clang-format to every hand-written C++ file of the project, or with
# --check lists the files that differ from it and fails (CI runs the check).
# Generated code (build trees) and recorded data (test/data, codegen/spec) are
# not ours to format.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
fmt=${CLANG_FORMAT:-clang-format}
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' | grep -v -e '^test/data/' -e '^codegen/spec/')
if [[ ${1:-} == --check ]]; then
  bad=()
  for f in "${files[@]}"; do
    if ! "$fmt" "$f" | cmp -s - "$f"; then bad+=("$f"); fi
  done
  if ((${#bad[@]})); then
    echo "format: ${#bad[@]} file(s) differ from .clang-format (run scripts/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files match .clang-format"
else
  "$fmt" -i "${files[@]}"
fi
