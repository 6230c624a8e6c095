#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy) over the compiled sources of kube::base, libkube,
# informer, workqueue and prometheus, and over the headers they include from
# those folders.
# Usage: scripts/tidy.sh BUILD_DIR   (a configured clang build tree with
# compile_commands.json; scripts/test.sh passes its clang + ThreadSanitizer
# build. A g++ sanitizer build's commands make headers include g++'s own
# sanitizer headers, which clang-tidy does not find.)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: scripts/tidy.sh BUILD_DIR}
tidy=${CLANG_TIDY:-clang-tidy-16}
jobs=${KUBE_JOBS:-$(nproc)}
cd "$root"
# Some sources include generated headers (kube/k8s/meta/v1/..., e.g. the
# metadata client the sharding coordinator uses): build kube::k8s_meta, which
# generates them, so clang-tidy finds them. The build that follows needs it too.
cmake --build "$build" -j "$jobs" --target kube_k8s_meta
mapfile -t files < <(git ls-files 'libkube/base/src/*.cpp' 'libkube/src/*.cpp' 'informer/src/*.cpp' 'informer/controller/src/*.cpp' 'workqueue/src/*.cpp' \
  'prometheus/src/*.cpp' |
  grep -v -e '_impl\.cpp$')
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The build may be g++'s: clang does not know some of its warning options.
status=0
# Each failure exits 1, never 255, so xargs goes on to the other files.
printf '%s\n' "${files[@]}" |
  xargs -P "$jobs" -I{} sh -c '"$0" -p "$1" --quiet --extra-arg=-Wno-unknown-warning-option "$2" || exit 1' \
    "$tidy" "$build" {} >"$log" 2>&1 ||
  status=$?
grep -v -e '^[0-9]* warnings\? generated' -e '^Suppressed ' -e '^Use -header-filter' "$log" || true
if ((status != 0)); then
  echo "tidy: clang-tidy reported findings (above)" >&2
  exit 1
fi
echo "tidy: ${#files[@]} sources clean"
