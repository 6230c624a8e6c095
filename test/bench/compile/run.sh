#!/usr/bin/env bash
# Compile cost of user code: CPU seconds and peak memory to compile the user
# TUs of test/install/consumer against an installed kube, as a user's build
# compiles them (no sanitizers, no ccache), at -O0 and -O2:
#   api_pod.cpp        kube::api<Pod> and one coroutine
#   configmap-mirror   samples/configmap-mirror/main.cpp, a small controller
#                      (typed API, informer factory, controller)
# usage: test/bench/compile/run.sh [-r RUNS] BUILD_DIR...
# Each BUILD_DIR is a configured and built kube tree (scripts/test.sh leaves
# build/clang-asan, clang 16 + libc++, and build/gcc-tsan, g++ + libstdc++); it is
# installed into a scratch prefix and the consumer is configured with that
# tree's compiler and standard library. Prints one line per (tree, TU, -O):
# the median of RUNS (default 3) of user+sys CPU seconds, and the peak RSS.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
runs=3
if [[ ${1:-} == -r ]]; then runs=$2; shift 2; fi
(($# > 0)) || { sed -n '2,14p' "$0"; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cache_value() { sed -n "s/^$2:[A-Z]*=//p" "$1/CMakeCache.txt"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%-34s %-18s %4s %9s %9s\n' tree TU opt "CPU s" "peak MiB"
for tree in "$@"; do
  tree=$(cd "$tree" && pwd)
  name=$(basename "$tree")
  prefix=$work/$name/prefix
  cmake --install "$tree" --prefix "$prefix" >/dev/null
  cxx=$(cache_value "$tree" CMAKE_CXX_COMPILER)
  flags=$(cache_value "$tree" CMAKE_CXX_FLAGS)
  deps=$(cache_value "$tree" CMAKE_PREFIX_PATH)
  cmake -S "$root/test/install/consumer" -B "$work/$name/build" -G Ninja -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_PREFIX_PATH="$prefix;$deps" \
    -DCMAKE_CXX_COMPILER_LAUNCHER= -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DKUBE_SMALL_CONTROLLER_SOURCE="$root/samples/configmap-mirror/main.cpp" >/dev/null
  # The compile commands of the two TUs, as the user's build runs them.
  mapfile -t cmds < <(python3 - "$work/$name/build/compile_commands.json" <<'PY'
import json, sys
for e in json.load(open(sys.argv[1])):
    for tu in ("api_pod.cpp", "configmap-mirror/main.cpp"):
        if e["file"].endswith(tu):
            print(tu.split("/")[0] + "\t" + e["directory"] + "\t" + e["command"])
PY
  )
  for c in "${cmds[@]}"; do
    IFS=$'\t' read -r tu dir cmd <<<"$c"
    for opt in -O0 -O2; do
      cpu=() rss=()
      for ((i = 0; i < runs; ++i)); do
        # shellcheck disable=SC2086
        out=$(cd "$dir" && /usr/bin/time -f '%U %S %M' $cmd $opt -o "$work/tu.o" 2>&1 >/dev/null | tail -1)
        read -r u s m <<<"$out"
        cpu+=("$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')")
        rss+=("$m")
      done
      printf '%-34s %-18s %4s %9s %9s\n' "$name ($(basename "$cxx") ${flags:-libstdc++})" "$tu" "$opt" \
        "$(printf '%s\n' "${cpu[@]}" | median)" "$(($(printf '%s\n' "${rss[@]}" | median) / 1024))"
    done
  done
done
