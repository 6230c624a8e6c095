#!/usr/bin/env bash
# Workqueue benchmark, ours vs client-go's util/workqueue, in one run.
#
#   test/bench/workqueue/run.sh [-n N] [-r RUNS] [-w "workload ..."] [-B BUILD_DIR] [-M]
#
# Builds kube-bench-workqueue (Release, no sanitizers) into BUILD_DIR (default
# build/bench-release) and the client-go peer (test/bench/go/cmd/workqueue,
# GOTOOLCHAIN=local), runs every workload RUNS times per implementation
# (alternating, one process per run) and prints medians: ns/op of each, the
# ratio ours/client-go (< 1 means ours is faster) with the range of the
# per-run ratios (run i of ours over run i of client-go), and CPU seconds and
# peak RSS of each process. The raw RESULT lines stay in
# BUILD_DIR/workqueue-results.txt.
#
# -M: the cost of metrics instead. Runs ours only, in three modes: metrics
# off; `hooks` (kube-bench-workqueue --hooks: hooks that only count their
# calls, so what remains is the queue's own recording: its timestamps and
# clock readings); and on (--metrics: the queue's hooks from a
# kube::prometheus::metrics). The same workloads, RUNS times each, one
# process per run, the order of the three rotating from run to run. Prints
# the medians of each mode and the ratios hooks / off and on / off (> 1:
# that much slower) with the range of the per-run ratios, for ns/op, CPU
# seconds and peak RSS, and what the hooks recorded (the METRICS line of
# each metrics-on run: items added, taken and done, retries). The raw lines
# stay in BUILD_DIR/workqueue-metrics-results.txt. No Go is needed.
#
# KUBE_BUILD_LOCK=FILE: the build runs under `flock FILE` (a machine
# shared with other builds).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build="$root/build/bench-release"
n=1000000
runs=5
workloads="distinct_1w distinct_2w dedup_hot add_after_random rate_limited"
metrics=""
while getopts "n:r:w:B:M" opt; do
  case $opt in
    n) n=$OPTARG ;;
    r) runs=$OPTARG ;;
    w) workloads=$OPTARG ;;
    B) build=$OPTARG ;;
    M) metrics=1 ;;
    *) echo "usage: $0 [-n N] [-r RUNS] [-w \"workloads\"] [-B BUILD_DIR] [-M]" >&2; exit 2 ;;
  esac
done

echo "== building (Release, no sanitizers) in $build" >&2
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKUBE_SANITIZE= \
  -DKUBE_BUILD_SAMPLES=OFF >/dev/null
${KUBE_BUILD_LOCK:+flock "$KUBE_BUILD_LOCK"} cmake --build "$build" --target kube-bench-workqueue >&2
bench="$build/test/bench/workqueue/kube-bench-workqueue"

if [[ -n $metrics ]]; then
  results="$build/workqueue-metrics-results.txt"  # the raw RESULT and METRICS lines of this run, kept
  : >"$results"
  for w in $workloads; do
    for ((i = 1; i <= runs; i++)); do
      echo "== $w run $i/$runs, metrics off, hooks only and on" >&2
      # The order rotates: no mode always follows another.
      case $((i % 3)) in
        1) order="off hooks on" ;;
        2) order="hooks on off" ;;
        0) order="on off hooks" ;;
      esac
      for m in $order; do
        flag=""
        [[ $m == hooks ]] && flag=--hooks
        [[ $m == on ]] && flag=--metrics
        "$bench" "$w" "$n" $flag | grep -E '^(RESULT|METRICS)' >>"$results"
      done
    done
  done
  # What one reading of the clock costs here (the queue's metrics read it
  # twice or three times per item): the median of RUNS processes.
  for ((i = 1; i <= runs; i++)); do "$bench" clock_read 20000000 | grep '^RESULT'; done >"$results.clock"
  python3 - "$results.clock" <<'PY'
import statistics, sys
ns = [float(dict(kv.split("=", 1) for kv in l.split()[1:])["ns_per_op"]) for l in open(sys.argv[1])]
print(f"one reading of the clock (kube::real_clock, steady_clock): median {statistics.median(ns):.1f} ns "
      f"(range {min(ns):.1f}-{max(ns):.1f}, {len(ns)} processes of 20,000,000 readings)")
PY
  python3 - "$results" "$runs" <<'PY'
import statistics, sys
rows, seen, order = {}, {}, []
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    key = f["workload"]
    if line.startswith("METRICS"):
        if float(f["bytes"]) > 0:  # the provider's, not the counting hooks'
            seen.setdefault(key, []).append(f)
        continue
    if key not in rows:
        rows[key] = {"kube": [], "kube-hooks": [], "kube-metrics": []}
        order.append(key)
    rows[key][f["impl"]].append((float(f["ns_per_op"]), float(f["cpu_s"]), int(f["maxrss_kb"]), int(f["n"])))
def med(xs, i):
    return statistics.median(x[i] for x in xs)
def ratio(a, b, i):
    per_run = [y[i] / x[i] for x, y in zip(a, b)]
    return f"**{med(b, i) / med(a, i):.2f}** ({min(per_run):.2f}-{max(per_run):.2f})"
print(f"metrics off / hooks only / on, kube only: medians of {sys.argv[2]} runs each; ratio = mode / off of the "
      "medians (> 1: that much more; within 5%: <= 1.05), in brackets the lowest and highest ratio of run i to run i")
print("| workload | n | ns/op off | hooks | on | ratio hooks | ratio on | CPU s off | hooks | on | ratio hooks | "
      "ratio on | peak RSS off (MiB) | on | ratio on | recorded (on, median): adds / gets / done / retries |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for k in order:
    a, h, b = rows[k]["kube"], rows[k]["kube-hooks"], rows[k]["kube-metrics"]
    rec = " / ".join(f"{statistics.median(float(s[c]) for s in seen.get(k, [{c: 'nan'}])):.0f}"
                     for c in ("adds", "gets", "done", "retries"))
    print(f"| {k} | {a[0][3]} | {med(a, 0):.1f} | {med(h, 0):.1f} | {med(b, 0):.1f} | {ratio(a, h, 0)} | "
          f"{ratio(a, b, 0)} | {med(a, 1):.2f} | {med(h, 1):.2f} | {med(b, 1):.2f} | {ratio(a, h, 1)} | "
          f"{ratio(a, b, 1)} | {med(a, 2) / 1024:.1f} | {med(b, 2) / 1024:.1f} | {ratio(a, b, 2)} | {rec} |")
PY
  exit 0
fi

(cd "$root/test/bench/go" && GOTOOLCHAIN=local go build -o "$build/go-bench-workqueue" ./cmd/workqueue)

results="$build/workqueue-results.txt"  # the raw RESULT lines of this run, kept
: >"$results"
for w in $workloads; do
  for ((i = 1; i <= runs; i++)); do
    echo "== $w run $i/$runs" >&2
    "$bench" "$w" "$n" | grep '^RESULT' >>"$results"
    "$build/go-bench-workqueue" "$w" "$n" | grep '^RESULT' >>"$results"
  done
done

python3 - "$results" "$runs" <<'PY'
import statistics, sys
rows = {}
order = []
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    key = f["workload"]
    if key not in rows:
        rows[key] = {"kube": [], "client-go": []}
        order.append(key)
    rows[key][f["impl"]].append((float(f["ns_per_op"]), float(f["cpu_s"]), int(f["maxrss_kb"]), int(f["n"])))
def med(xs, i):
    return statistics.median(x[i] for x in xs)
print(f"medians of {sys.argv[2]} runs; ratio = ours / client-go of the medians (lower is better; "
      "acceptance <= 0.5), range = lowest and highest ratio of run i to run i")
print("| workload | n | ns/op ours | ns/op client-go | ratio | ratio range | CPU s ours | CPU s client-go | "
      "peak RSS ours (MiB) | peak RSS client-go (MiB) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for k in order:
    a, b = rows[k]["kube"], rows[k]["client-go"]
    ra, rb = med(a, 0), med(b, 0)
    per_run = [x[0] / y[0] for x, y in zip(a, b)]
    print(f"| {k} | {a[0][3]} | {ra:.1f} | {rb:.1f} | {ra / rb:.2f} | {min(per_run):.2f}-{max(per_run):.2f} | "
          f"{med(a, 1):.2f} | {med(b, 1):.2f} | {med(a, 2) / 1024:.1f} | {med(b, 2) / 1024:.1f} |")
PY
