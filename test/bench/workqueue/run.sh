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
# -M: the cost of metrics instead. Runs ours only, with metrics off and on
# (kube-bench-workqueue --metrics: the queue's hooks from a
# kube::prometheus::metrics), the same workloads, RUNS times each,
# alternating one process per run (which goes first swaps from run to run),
# and prints the medians of both and the ratio on / off (> 1: metrics cost
# that much) with the range of the per-run ratios, for ns/op, CPU seconds
# and peak RSS, and what the hooks recorded (the METRICS line of each
# metrics-on run: items added, taken and done, retries). The raw lines stay
# in BUILD_DIR/workqueue-metrics-results.txt. No Go is needed.
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
      echo "== $w run $i/$runs, metrics off and on" >&2
      # Odd runs off first, even runs on first: neither always follows the other.
      if ((i % 2)); then order="off on"; else order="on off"; fi
      for m in $order; do
        flag=""
        [[ $m == on ]] && flag=--metrics
        "$bench" "$w" "$n" $flag | grep -E '^(RESULT|METRICS)' >>"$results"
      done
    done
  done
  python3 - "$results" "$runs" <<'PY'
import statistics, sys
rows, seen, order = {}, {}, []
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    key = f["workload"]
    if line.startswith("METRICS"):
        seen.setdefault(key, []).append(f)
        continue
    if key not in rows:
        rows[key] = {"kube": [], "kube-metrics": []}
        order.append(key)
    rows[key][f["impl"]].append((float(f["ns_per_op"]), float(f["cpu_s"]), int(f["maxrss_kb"]), int(f["n"])))
def med(xs, i):
    return statistics.median(x[i] for x in xs)
print(f"metrics off / on, kube only: medians of {sys.argv[2]} runs each; ratio = on / off of the medians "
      "(> 1: metrics cost that much; within 5%: <= 1.05), range = lowest and highest ratio of run i to run i")
print("| workload | n | ns/op off | ns/op on | ratio | ratio range | CPU s off | CPU s on | ratio | "
      "peak RSS off (MiB) | peak RSS on (MiB) | ratio | recorded (on, median): adds / gets / done / retries |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for k in order:
    a, b = rows[k]["kube"], rows[k]["kube-metrics"]
    per_run = [y[0] / x[0] for x, y in zip(a, b)]
    rec = " / ".join(f"{statistics.median(float(s[c]) for s in seen.get(k, [{c: 'nan'}])):.0f}"
                     for c in ("adds", "gets", "done", "retries"))
    print(f"| {k} | {a[0][3]} | {med(a, 0):.1f} | {med(b, 0):.1f} | {med(b, 0) / med(a, 0):.3f} | "
          f"{min(per_run):.2f}-{max(per_run):.2f} | {med(a, 1):.2f} | {med(b, 1):.2f} | {med(b, 1) / med(a, 1):.3f} | "
          f"{med(a, 2) / 1024:.1f} | {med(b, 2) / 1024:.1f} | {med(b, 2) / med(a, 2):.3f} | {rec} |")
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
