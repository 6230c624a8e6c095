#!/usr/bin/env bash
# Runs every test of the project on this machine, from a clean clone:
#   1. installs missing Debian packages (scripts/install-deps.sh) and checks
#      that every C++ file matches .clang-format (scripts/format.sh --check)
#      and that every path the README and docs name exists
#      (scripts/check-doc-paths.py) and no two parts of the SDK depend on each
#      other both ways (scripts/folder-deps.py),
#   2. builds yaml-cpp and prometheus-cpp with libc++ from Debian's sources
#      (scripts/libcxx-deps.sh, cached across runs): Debian's are libstdc++,
#   3. builds every target with clang 16 + libc++, AddressSanitizer + UBSan
#      and warnings as errors (build/clang-asan), including the real test
#      cluster (kube-apiserver + etcd from Go modules, cached across runs),
#   4. runs every ctest there: unit tests, integration tests against the real
#      cluster, samples, the install checks, the docs;
#      meanwhile, at the lowest priority, in the background:
#   5. builds every target with g++ 12 + libstdc++, ThreadSanitizer and
#      warnings as errors (build/gcc-tsan), then runs clang-tidy (.clang-tidy)
#      over libkube, informer and workqueue with the clang build's compile
#      commands, and builds the libFuzzer targets (clang 16, AddressSanitizer
#      + UBSan, build/fuzz);
#   6. once the g++ build is done (clang-tidy and the fuzz build go on):
#      runs under ThreadSanitizer, with the second compiler and standard
#      library, every unit test (no cluster) and the tests labelled `tsan`
#      (threaded code) and `install` (user projects built with g++ and
#      libstdc++),
#   7. runs each fuzz target for a short budget (scripts/fuzz.sh; their seed
#      corpora are also replayed in step 4, label fuzz).
# Which compiler takes which sanitizer is a matter of compile time: clang 16
# compiles the tests with AddressSanitizer + UBSan in about half the CPU time
# g++ 12 needs (UBSan's null and alignment checks double g++'s time at -O0),
# and g++'s ThreadSanitizer build costs it about what its plain build does.
# Everything compiles at -O0 in both builds: g++ 12 with ThreadSanitizer
# compiles the hand-written libraries 1.4 times slower at -O1
# (src/transport/round_trip.cpp: 25.0 CPU s at -O1, 17.5 at -O0), and the
# slower ThreadSanitizer tests run while clang-tidy and the fuzz build go on.
# Debug information is -g1: line tables, all the sanitizers' reports need;
# full -g took 12% longer to compile a heavy test and made it 14% larger.
# At the end it prints the time of each step and, for each build, its ten
# slowest build steps (scripts/slowest-tus.sh); docs/building.md keeps a
# cold run's table.
# Environment: KUBE_BUILD_DIR (default ./build), KUBE_JOBS (default nproc),
# KUBE_SKIP_SECOND=1 skips steps 5-7 during local iteration; KUBE_FUZZ_SECONDS
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
second_pid=""
summary() {
  local rc=$? now
  now=$(date +%s)
  # a failure before the background builds were waited for: stop them
  [[ -n $second_pid ]] && kill -- -"$second_pid" 2>/dev/null
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

stamp "yaml-cpp and prometheus-cpp with libc++ (Debian sources, cached)"
prefix=$("$root/scripts/libcxx-deps.sh" | tail -1)

stamp "configure + build everything (clang 16, libc++, address,undefined)"
CXX=clang++-16 configure "$build/clang-asan" "address,undefined" -O0 -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_FLAGS=-stdlib=libc++ -DCMAKE_EXE_LINKER_FLAGS=-stdlib=libc++ \
  -DCMAKE_SHARED_LINKER_FLAGS=-stdlib=libc++ -DKUBE_BOOST_SOURCES=ON
built+=("$build/clang-asan")
cmake --build "$build/clang-asan" -j "$jobs"
second_builds() { # every target with g++ 12 + libstdc++ (TSan), clang-tidy, fuzzers
  set -euo pipefail
  echo "== $(date +%H:%M:%S) configure + build everything (g++ 12, libstdc++, thread)"
  CXX=g++ configure "$build/gcc-tsan" "thread" -O0
  cmake --build "$build/gcc-tsan" -j "$jobs"
  touch "$build/gcc-tsan.built"  # its ctest may start; the rest goes on meanwhile
  echo "== $(date +%H:%M:%S) clang-tidy over the clang build's compile commands"
  "$root/scripts/tidy.sh" "$build/clang-asan"
  echo "== $(date +%H:%M:%S) build the fuzz targets (clang 16, address+undefined, libFuzzer)"
  KUBE_BUILD_DIR=$build KUBE_JOBS=$jobs "$root/scripts/fuzz.sh" --build-only
  echo "== $(date +%H:%M:%S) background builds done"
}
second=$([[ ${KUBE_SKIP_SECOND:-0} == 1 ]] && echo 0 || echo 1)
if ((second)); then
  # The AddressSanitizer ctest mostly waits on the cluster: the other builds
  # use the idle CPU meanwhile, at the lowest priority, so the tests do not
  # wait for them.
  built+=("$build/gcc-tsan" "$build/fuzz")
  second_log=$build/second-builds.log
  rm -f "$build/gcc-tsan.built"
  # Its own process group (setsid), so that a failure can stop all of it.
  export root build jobs
  setsid nice -n 19 bash -c "$(declare -f configure second_builds); second_builds" >"$second_log" 2>&1 &
  second_pid=$!
  stamp "ctest (clang 16, libc++, address,undefined); the g++ build, clang-tidy and the fuzz build start at low priority"
else
  stamp "ctest (clang 16, libc++, address,undefined)"
fi
(cd "$build/clang-asan" && ctest --output-on-failure --no-tests=error -j "$jobs")

if ((second)); then
  # second_done: the background builds' exit status, once they ended.
  second_done() {
    local rc=0
    wait "$second_pid" || rc=$?
    second_pid=""
    cat "$second_log"
    ((rc == 0)) || { echo "test.sh: the background builds failed (exit $rc), above" >&2; exit 1; }
  }
  stamp "background: every target with g++ 12 + libstdc++ (thread) (the rest of it)"
  while [[ ! -e $build/gcc-tsan.built ]] && kill -0 "$second_pid" 2>/dev/null; do sleep 2; done
  [[ -e $build/gcc-tsan.built ]] || second_done
  stamp "ctest -L 'unit|tsan|install' (g++ 12, libstdc++, thread); clang-tidy and the fuzz build go on at low priority"
  (cd "$build/gcc-tsan" && ctest --output-on-failure --no-tests=error -j "$jobs" -L 'unit|tsan|install')
  stamp "background: clang-tidy, the fuzz targets (the rest of them)"
  second_done
  stamp "fuzz (clang 16, address+undefined): every target for ${fuzz_seconds}s"
  KUBE_BUILD_DIR=$build KUBE_JOBS=$jobs "$root/scripts/fuzz.sh" --each "$fuzz_seconds"
fi
stamp "all tests passed"
