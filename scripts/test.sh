#!/usr/bin/env bash
# Runs every test of the project on this machine, from a clean clone:
#   1. installs missing Debian packages (scripts/install-deps.sh) and checks
#      that every C++ file matches .clang-format (scripts/format.sh --check)
#      and that every path the README and docs name exists
#      (scripts/check-doc-paths.py) and no two parts of the SDK depend on each
#      other beyond the pairs known (scripts/folder-deps.py),
#   2. builds every target with g++ 12 + libstdc++, AddressSanitizer + UBSan
#      and warnings as errors, including the real test cluster (kube-apiserver
#      + etcd from Go modules, cached across runs),
#   3. runs ctest there: unit tests, integration tests against the real
#      cluster, samples, the install/find_package checks,
#   4. builds yaml-cpp and prometheus-cpp with libc++ from Debian's sources
#      (scripts/libcxx-deps.sh, cached across runs): Debian's are libstdc++,
#   5. configures a second build, clang 16 + libc++ with ThreadSanitizer and
#      warnings as errors, runs clang-tidy (.clang-tidy) over libkube,
#      informer and workqueue with its compile commands, then
#   6. builds every target there and runs under ThreadSanitizer every unit
#      test (no cluster) and the tests labelled `tsan` (threaded code),
#      `clang` (the hand-written runtime: a second compiler, as g++ 12 has
#      coroutine bugs) and `install` (user projects with clang and libc++),
#   7. builds the libFuzzer targets (clang 16, AddressSanitizer + UBSan,
#      build/fuzz) and runs each for a short budget (scripts/fuzz.sh; their
#      seed corpora are also replayed in step 3, label fuzz).
# Everything compiles at -O0 in the g++ build (-O1 doubled the libraries'
# compile time: 91 -> 52 CPU s for watch_stream.cpp); in the clang build the
# hand-written libraries compile at -O1, as ThreadSanitizer runs slowly on
# unoptimized code, and tests and generated code at -O0
# (cmake/KubeToolchain.cmake, kube_debug_unoptimized).
# Debug information is -g1: line tables, all the sanitizers' reports need;
# full -g took 12% longer to compile a heavy test and made it 14% larger.
# At the end it prints the time of each step and, for each build, its ten
# slowest build steps (scripts/slowest-tus.sh); docs/building.md keeps a
# cold run's table.
# Environment: KUBE_BUILD_DIR (default ./build), KUBE_JOBS (default nproc),
# KUBE_SKIP_CLANG=1 skips steps 4-7 during local iteration; KUBE_FUZZ_SECONDS
# (default 15) is the fuzzing budget per target in step 7.
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
clang_pid=""
summary() {
  local rc=$? now
  now=$(date +%s)
  # a failure before the clang builds were waited for: stop them
  [[ -n $clang_pid ]] && kill -- -"$clang_pid" 2>/dev/null
  [[ -n $step_name && $step_name != "all tests passed" ]] && steps+=("$(printf '%6ds  %s' $((now - step_start)) "$step_name")")
  echo "== time per step (exit $rc):"
  printf '%s\n' "${steps[@]}"
  printf '%6ds  total\n' $((now - run_start))
  local b
  for b in "${built[@]}"; do
    echo "== the ten slowest build steps of $b (wall s, under -j $jobs):"
    "$root/scripts/slowest-tus.sh" "$b" 10 || true
  done
}
built=()
trap summary EXIT

stamp "install missing Debian packages"
"$root/scripts/install-deps.sh"
configure() { # DIR SANITIZERS OPT [cmake args...]   (OPT: the libraries' -O level)
  local dir=$1 sanitize=$2 opt=$3
  shift 3
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-g1 $opt -D_GLIBCXX_ASSERTIONS" \
    -DKUBE_WERROR=ON -DKUBE_SANITIZE="$sanitize" -DKUBE_BUILD_TESTS=ON -DKUBE_BUILD_SAMPLES=ON "$@"
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
# Sanitizer reports name functions and lines only with a symbolizer; clang 16's
# (package llvm-16) reads the DWARF 5 that both compilers write.
if [[ -x /usr/lib/llvm-16/bin/llvm-symbolizer ]]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-16/bin/llvm-symbolizer
  export TSAN_OPTIONS="$TSAN_OPTIONS:external_symbolizer_path=$ASAN_SYMBOLIZER_PATH"
  export UBSAN_OPTIONS="$UBSAN_OPTIONS:external_symbolizer_path=$ASAN_SYMBOLIZER_PATH"
fi

stamp "format check, every path the docs name exists, the parts depend one way"
"$root/scripts/format.sh" --check
python3 "$root/scripts/check-doc-paths.py"
python3 "$root/scripts/folder-deps.py" --check >/dev/null

stamp "configure + build everything (g++ 12, libstdc++, address,undefined)"
configure "$build/asan" "address,undefined" -O0
built+=("$build/asan")
cmake --build "$build/asan" -j "$jobs"
clang_builds() { # the clang builds: libc++ dependencies, clang-tidy, every target with clang 16 + libc++ (TSan), fuzzers
  set -euo pipefail
  local prefix
  echo "== $(date +%H:%M:%S) yaml-cpp and prometheus-cpp with libc++ (Debian sources, cached)"
  prefix=$("$root/scripts/libcxx-deps.sh" | tail -1)
  echo "== $(date +%H:%M:%S) configure (clang 16, libc++, thread), clang-tidy over its compile commands"
  CXX=clang++-16 configure "$build/clang-tsan" "thread" -O1 -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CXX_FLAGS=-stdlib=libc++ -DCMAKE_EXE_LINKER_FLAGS=-stdlib=libc++ \
    -DCMAKE_SHARED_LINKER_FLAGS=-stdlib=libc++ -DKUBE_BOOST_SOURCES=ON
  "$root/scripts/tidy.sh" "$build/clang-tsan"
  echo "== $(date +%H:%M:%S) build everything (clang 16, libc++, thread)"
  cmake --build "$build/clang-tsan" -j "$jobs"
  echo "== $(date +%H:%M:%S) build the fuzz targets (clang 16, address+undefined, libFuzzer)"
  KUBE_BUILD_DIR=$build KUBE_JOBS=$jobs "$root/scripts/fuzz.sh" --build-only
  echo "== $(date +%H:%M:%S) clang builds done"
}
clang=$([[ ${KUBE_SKIP_CLANG:-0} == 1 ]] && echo 0 || echo 1)
if ((clang)); then
  # The ASan ctest mostly waits on the cluster: the clang builds use the idle
  # CPU meanwhile, at the lowest priority, so the tests do not wait for them.
  built+=("$build/clang-tsan" "$build/fuzz")
  clang_log=$build/clang-builds.log
  mkdir -p "$build"
  # Its own process group (setsid), so that a failure can stop all of it.
  export root build jobs
  setsid nice -n 19 bash -c "$(declare -f configure clang_builds); clang_builds" >"$clang_log" 2>&1 &
  clang_pid=$!
  stamp "ctest (g++, address,undefined); the clang builds start at low priority"
else
  stamp "ctest (g++, address,undefined)"
fi
(cd "$build/asan" && ctest --output-on-failure --no-tests=error -j "$jobs")

if ((clang)); then
  stamp "clang builds: clang-tidy, every target with clang 16 + libc++ (thread), fuzz targets (the rest of them)"
  clang_rc=0
  wait "$clang_pid" || clang_rc=$?
  clang_pid=""
  cat "$clang_log"
  ((clang_rc == 0)) || { echo "test.sh: the clang builds failed (exit $clang_rc), above" >&2; exit 1; }
  stamp "ctest -L 'unit|tsan|clang|install' (clang 16, libc++, thread)"
  (cd "$build/clang-tsan" && ctest --output-on-failure --no-tests=error -j "$jobs" -L 'unit|tsan|clang|install')
  stamp "fuzz (clang 16, address+undefined): every target for ${fuzz_seconds}s"
  KUBE_BUILD_DIR=$build KUBE_JOBS=$jobs "$root/scripts/fuzz.sh" --each "$fuzz_seconds"
fi
stamp "all tests passed"
