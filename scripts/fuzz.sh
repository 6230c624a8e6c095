#!/usr/bin/env bash
# Builds the libFuzzer targets of test/fuzz (clang, AddressSanitizer + UBSan,
# coverage everywhere: KUBE_FUZZ=ON) and runs each one for a time budget,
# starting from its seed corpus in test/fuzz/corpus/<name>/.
#
#   scripts/fuzz.sh                     every target, one hour of fuzzing in all
#   scripts/fuzz.sh --total 600         every target, ten minutes of fuzzing in all
#   scripts/fuzz.sh --each 20           every target for 20 s (CI)
#   scripts/fuzz.sh --each 300 gzip     one target (names as in test/fuzz/corpus/)
#   scripts/fuzz.sh --build-only        configure and build, run nothing
#
# Inputs the fuzzer finds interesting are kept in <build>/fuzz/work/<name>/
# (reused by the next run, never committed). An input that crashes, leaks,
# hangs (-timeout) or runs out of memory is copied into
# test/fuzz/corpus/<name>/ as crash-*, leak-*, timeout-* or oom-*: the
# replay ctest (fuzz.<name>_fuzz) then fails on it until the bug is fixed,
# and the input stays as a regression seed. The script fails if any target
# found one. At the end it prints each target's executions. KUBE_JOBS
# targets run at once, one per core: --each 15 over 11 targets takes about
# 90 s on two cores.
# Environment: KUBE_BUILD_DIR (default ./build), KUBE_JOBS (default nproc),
# KUBE_FUZZ_FLAGS (extra libFuzzer flags).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KUBE_BUILD_DIR:-$root/build}/fuzz
jobs=${KUBE_JOBS:-$(nproc)}

total=3600
each=""
build_only=0
names=()
while (($#)); do
  case $1 in
  --total) total=$2; shift 2 ;;
  --each) each=$2; shift 2 ;;
  --build-only) build_only=1; shift ;;
  -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
  -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
  *) names+=("$1"); shift ;;
  esac
done
if ((${#names[@]} == 0)); then
  for d in "$root"/test/fuzz/corpus/*/; do names+=("$(basename "$d")"); done
fi
if [[ -z $each ]]; then each=$((total / ${#names[@]})); fi
((each > 0)) || { echo "fuzz.sh: a budget of at least 1 s per target" >&2; exit 2; }

for n in "${names[@]}"; do
  [[ -d $root/test/fuzz/corpus/$n ]] || { echo "fuzz.sh: no corpus test/fuzz/corpus/$n" >&2; exit 2; }
done

CXX=clang++-16 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1 -D_GLIBCXX_ASSERTIONS" -DKUBE_WERROR=ON \
  -DKUBE_SANITIZE="address,undefined" -DKUBE_FUZZ=ON \
  -DKUBE_BUILD_TESTS=ON -DKUBE_BUILD_SAMPLES=OFF >/dev/null
targets=("${names[@]/%/_fuzz}")
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
((build_only == 0)) || exit 0

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# fuzz_one NAME: fuzzes one target for the budget; leaves its summary line in
# <build>/artifacts/NAME.report and its exit status in NAME.rc.
fuzz_one() {
  local n=$1 work=$build/work/$1 artifacts=$build/artifacts/$1 log=$build/artifacts/$1.log rc execs rate
  rm -rf "$artifacts"
  mkdir -p "$work" "$artifacts"
  set +e
  # -timeout: one input may take 10 s (a hang beyond that is a finding);
  # -rss_limit_mb: 2 GB (larger is an out-of-memory finding).
  # shellcheck disable=SC2086
  "$build/test/fuzz/${n}_fuzz" -max_total_time="$each" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" ${KUBE_FUZZ_FLAGS:-} \
    "$work" "$root/test/fuzz/corpus/$n" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  printf '%-16s %6ss %12s execs %8s/s %6s inputs kept\n' "$n" "$each" "${execs:-?}" "${rate:-?}" \
    "$(find "$work" -type f | wc -l)" >"$artifacts.report"
  echo "$rc" >"$artifacts.rc"
}
# One target per core at a time: each fuzzer is one process on one core, so
# the budget per target is the same and the whole run takes 1/jobs of it.
mkdir -p "$build/artifacts"
for n in "${names[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  echo "== fuzz $n for ${each}s"
  fuzz_one "$n" &
done
wait

found=()
report=()
for n in "${names[@]}"; do
  artifacts=$build/artifacts/$n
  report+=("$(cat "$artifacts.report")")
  shopt -s nullglob
  for f in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*; do
    cp "$f" "$root/test/fuzz/corpus/$n/"
    found+=("test/fuzz/corpus/$n/$(basename "$f")")
  done
  shopt -u nullglob
  rc=$(cat "$artifacts.rc")
  if ((rc != 0)); then
    echo "fuzz.sh: $n stopped with exit $rc; its log: $artifacts.log" >&2
    tail -40 "$artifacts.log" >&2
    [[ ${#found[@]} -gt 0 ]] || found+=("(no input saved; see $artifacts.log)")
  fi
done

echo "== fuzz summary (clang, address+undefined, ${each}s per target, $jobs at a time)"
printf '%s\n' "${report[@]}"
if ((${#found[@]})); then
  echo "fuzz.sh: findings, now seeds of the replay ctests:" >&2
  printf '  %s\n' "${found[@]}" >&2
  exit 1
fi
