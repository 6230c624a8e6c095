#!/usr/bin/env bash
# Runs every test of the project on this machine, from a clean clone:
#   1. installs missing Debian packages (scripts/install-deps.sh) and checks
#      that every C++ file matches .clang-format (scripts/format.sh --check),
#   2. builds everything with AddressSanitizer + UBSan and warnings as errors,
#      including the real test cluster (kube-apiserver + etcd from Go modules,
#      cached across runs),
#   3. runs ctest: unit tests, integration tests against the real cluster,
#      samples, the install/find_package check,
#   4. rebuilds the tests labelled `tsan` (threaded code) with ThreadSanitizer
#      and runs them,
#   5. builds the libraries and samples in Release (-O3), warnings as errors:
#      some warnings only appear with optimization, in the templates users
#      instantiate from our headers,
#   6. runs clang-tidy (.clang-tidy) over libkube, informer and workqueue
#      with the compile commands of a clang build (no sanitizers), then
#   7. builds the libraries and the unit tests of the hand-written runtime
#      with clang (a second compiler: g++ 12 has coroutine bugs) and runs
#      those tests.
# Environment: KUBE_BUILD_DIR (default ./build), KUBE_JOBS (default nproc),
# KUBE_SKIP_TSAN=1 / KUBE_SKIP_RELEASE=1 / KUBE_SKIP_CLANG=1 to skip step 4 /
# 5 / 6-7 during local iteration.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KUBE_BUILD_DIR:-$root/build}
jobs=${KUBE_JOBS:-$(nproc)}
export GOTOOLCHAIN=local

"$root/scripts/install-deps.sh"

stamp() { echo "== $(date +%H:%M:%S) $*"; }
configure() { # DIR SANITIZERS
  cmake -S "$root" -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-g -O1 -D_GLIBCXX_ASSERTIONS" \
    -DKUBE_WERROR=ON -DKUBE_SANITIZE="$2" -DKUBE_BUILD_TESTS=ON -DKUBE_BUILD_SAMPLES=ON
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

stamp "format check"
"$root/scripts/format.sh" --check

stamp "configure + build (address,undefined)"
configure "$build/asan" "address,undefined"
cmake --build "$build/asan" -j "$jobs"
stamp "ctest (address,undefined)"
(cd "$build/asan" && ctest --output-on-failure --no-tests=error -j "$jobs")

if [[ ${KUBE_SKIP_TSAN:-0} != 1 ]]; then
  stamp "configure + build (thread): the tsan-labelled tests only"
  configure "$build/tsan" "thread"
  cmake --build "$build/tsan" -j "$jobs" --target kube_tsan_tests
  stamp "ctest -L tsan (thread)"
  (cd "$build/tsan" && ctest --output-on-failure --no-tests=error -j "$jobs" -L tsan)
fi
if [[ ${KUBE_SKIP_RELEASE:-0} != 1 ]]; then
  stamp "configure + build (Release, warnings as errors): libraries and samples"
  cmake -S "$root" -B "$build/release" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DKUBE_WERROR=ON -DKUBE_SANITIZE= -DKUBE_BUILD_TESTS=OFF -DKUBE_BUILD_SAMPLES=ON
  cmake --build "$build/release" -j "$jobs"
fi
if [[ ${KUBE_SKIP_CLANG:-0} != 1 ]]; then
  stamp "configure (clang, warnings as errors), clang-tidy over its compile commands"
  CXX=clang++ cmake -S "$root" -B "$build/clang" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DKUBE_WERROR=ON -DKUBE_SANITIZE= \
    -DKUBE_BUILD_TESTS=ON -DKUBE_BUILD_SAMPLES=OFF
  "$root/scripts/tidy.sh" "$build/clang"
  stamp "build (clang): libraries and runtime unit tests"
  cmake --build "$build/clang" -j "$jobs" --target kube_clang_tests
  stamp "ctest -L clang (clang)"
  (cd "$build/clang" && ctest --output-on-failure --no-tests=error -j "$jobs" -L clang)
fi
stamp "all tests passed"
