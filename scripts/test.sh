#!/usr/bin/env bash
# Runs every test of the project on this machine, from a clean clone:
#   1. installs missing Debian packages (scripts/install-deps.sh) and checks
#      that every C++ file matches .clang-format (scripts/format.sh --check),
#   2. builds everything with AddressSanitizer + UBSan and warnings as errors,
#      including the real test cluster (kube-apiserver + etcd from Go modules,
#      cached across runs),
#   3. runs ctest: unit tests, integration tests against the real cluster,
#      samples, the install/find_package check,
#   4. configures a second build with clang and ThreadSanitizer, runs
#      clang-tidy (.clang-tidy) over libkube, informer and workqueue with its
#      compile commands, then
#   5. builds there the tests labelled `tsan` (threaded code) and `clang` (the
#      hand-written runtime: a second compiler, as g++ 12 has coroutine bugs)
#      and runs them under ThreadSanitizer,
#   6. builds the libFuzzer targets (clang, AddressSanitizer + UBSan,
#      build/fuzz) and runs each for a short budget (scripts/fuzz.sh; their
#      seed corpora are also replayed in step 3, label fuzz).
# Tests and generated code compile at -O0 in both builds, the hand-written
# libraries at -O1 (cmake/KubeToolchain.cmake, kube_debug_unoptimized).
# Debug information is -g1: line tables, all the sanitizers' reports need;
# full -g took 12% longer to compile a heavy test and made it 14% larger.
# Environment: KUBE_BUILD_DIR (default ./build), KUBE_JOBS (default nproc),
# KUBE_SKIP_CLANG=1 skips steps 4-6 during local iteration; KUBE_FUZZ_SECONDS
# (default 15) is the fuzzing budget per target in step 6.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KUBE_BUILD_DIR:-$root/build}
jobs=${KUBE_JOBS:-$(nproc)}
fuzz_seconds=${KUBE_FUZZ_SECONDS:-15}
export GOTOOLCHAIN=local

# stamp STEP: starts a step; the time each step took is printed at the end,
# also when a step fails.
steps=()
step_name=""
step_start=$(date +%s)
run_start=$step_start
stamp() {
  local now
  now=$(date +%s)
  [[ -n $step_name ]] && steps+=("$(printf '%6ds  %s' $((now - step_start)) "$step_name")")
  step_name=$*
  step_start=$now
  echo "== $(date +%H:%M:%S) $*"
}
summary() {
  local rc=$? now
  now=$(date +%s)
  [[ -n $step_name && $step_name != "all tests passed" ]] && steps+=("$(printf '%6ds  %s' $((now - step_start)) "$step_name")")
  echo "== time per step (exit $rc):"
  printf '%s\n' "${steps[@]}"
  printf '%6ds  total\n' $((now - run_start))
}
trap summary EXIT

stamp "install missing Debian packages"
"$root/scripts/install-deps.sh"
configure() { # DIR SANITIZERS
  cmake -S "$root" -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1 -D_GLIBCXX_ASSERTIONS" \
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

if [[ ${KUBE_SKIP_CLANG:-0} != 1 ]]; then
  stamp "configure (clang, thread, warnings as errors), clang-tidy over its compile commands"
  CXX=clang++ configure "$build/clang-tsan" "thread"
  "$root/scripts/tidy.sh" "$build/clang-tsan"
  stamp "build (clang, thread): the tests labelled tsan or clang"
  cmake --build "$build/clang-tsan" -j "$jobs" --target kube_tsan_tests kube_clang_tests
  stamp "ctest -L 'tsan|clang' (clang, thread)"
  (cd "$build/clang-tsan" && ctest --output-on-failure --no-tests=error -j "$jobs" -L 'tsan|clang')
  stamp "build (clang, address+undefined, libFuzzer): the fuzz targets"
  KUBE_BUILD_DIR=$build KUBE_JOBS=$jobs "$root/scripts/fuzz.sh" --build-only
  stamp "fuzz (clang, address+undefined): every target for ${fuzz_seconds}s"
  KUBE_BUILD_DIR=$build KUBE_JOBS=$jobs "$root/scripts/fuzz.sh" --each "$fuzz_seconds"
fi
stamp "all tests passed"
