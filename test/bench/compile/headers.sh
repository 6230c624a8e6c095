#!/usr/bin/env bash
# Compile cost of each public header alone: CPU seconds (user+sys) and peak
# memory to compile a TU that only includes it, with -O0 and no sanitizers,
# as a user's build would. The headers of detail/ folders are left out (they
# are not included by users directly).
# usage: test/bench/compile/headers.sh BUILD_DIR [CXX [CXXFLAGS...]]
# BUILD_DIR is a configured kube tree (for the generated headers of
# kube::k8s_meta and the include paths); CXX defaults to g++. Prints a
# Markdown table, heaviest first, for docs/building.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
(($# > 0)) || { sed -n '2,9p' "$0"; exit 2; }
build=$(cd "$1" && pwd)
shift
cxx=${1:-g++}
(($# > 0)) && shift
extra=("$@")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

incs=(-I"$root/libkube/include" -I"$root/libkube/base/include" -I"$root/informer/include"
  -I"$root/informer/controller/include" -I"$root/workqueue/include" -I"$root/prometheus/include"
  -I"$build/codegen/generated/include")
defs=(-DBOOST_ASIO_DISABLE_BOOST_COROUTINE -DBOOST_ASIO_NO_DEPRECATED -DBOOST_ASIO_SEPARATE_COMPILATION
  -DBOOST_BEAST_SEPARATE_COMPILATION -DBOOST_JSON_NO_LIB -DBOOST_URL_NO_LIB)

mapfile -t headers < <(cd "$root" && find libkube/include libkube/base/include informer/include \
  informer/controller/include workqueue/include prometheus/include -name '*.hpp' -not -path '*/detail/*' | sort)

one() {
  local rel=$1 inc tu
  inc=${rel#*include/}
  tu=$work/$(echo "$inc" | tr '/.' '__').cpp
  printf '#include <%s>\n' "$inc" >"$tu"
  local out
  out=$( { /usr/bin/time -f '%U %S %M' "$cxx" -std=c++20 -O0 "${defs[@]}" "${incs[@]}" "${extra[@]}" \
    -c "$tu" -o "$tu.o" 2>&1 >/dev/null; } | tail -1)
  read -r u s m <<<"$out"
  printf '%s\t%s\t%s\n' "$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')" "$((m / 1024))" "$inc"
}

results=$work/results.tsv
for h in "${headers[@]}"; do
  one "$h"
done >"$results"

echo "| header (alone in a TU) | CPU s | peak MiB |"
echo "|---|---:|---:|"
sort -rn "$results" | awk -F'\t' '{ printf "| `%s` | %s | %s |\n", $3, $1, $2 }'
