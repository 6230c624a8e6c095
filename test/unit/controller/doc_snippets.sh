#!/usr/bin/env bash
# Every line of every ```cpp block of docs/guides/controllers.md must appear
# in the sources it is taken from (the samples, which are built and run as
# ctests), so the guide never shows code that does not compile.
set -euo pipefail
root=${1:?usage: doc_snippets.sh SOURCE_DIR}
doc=$root/docs/guides/controllers.md
sources=("$root/samples/sample-controller/main.cpp" "$root/samples/configmap-mirror/main.cpp")
trim() { sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//'; }
all=$(cat "${sources[@]}" | trim)
missing=0 checked=0 blocks=0
in=0
while IFS= read -r line; do
  if [[ $line == '```cpp' ]]; then in=1; blocks=$((blocks + 1)); continue; fi
  if [[ $line == '```' ]]; then in=0; continue; fi
  ((in)) || continue
  t=$(printf '%s' "$line" | trim)
  [[ -z $t ]] && continue
  checked=$((checked + 1))
  if ! grep -qxF -- "$t" <<<"$all"; then echo "not in the samples: $t" >&2; missing=$((missing + 1)); fi
done <"$doc"
echo "$blocks blocks, $checked lines checked, $missing missing"
((blocks > 0 && checked > 0 && missing == 0))
