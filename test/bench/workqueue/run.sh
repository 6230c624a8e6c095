#!/usr/bin/env bash
# Workqueue benchmark, ours vs client-go's util/workqueue, in one run.
#
#   test/bench/workqueue/run.sh [-n N] [-r RUNS] [-w "workload ..."] [-B BUILD_DIR]
#
# Builds kube-bench-workqueue (Release, no sanitizers) into BUILD_DIR (default
# build/bench-release) and the client-go peer (test/bench/go/cmd/workqueue,
# GOTOOLCHAIN=local), runs every workload RUNS times per implementation
# (alternating, one process per run) and prints medians: ns/op of each, the
# ratio ours/client-go (< 1 means ours is faster) with the range of the
# per-run ratios (run i of ours over run i of client-go), and CPU seconds and
# peak RSS of each process. The raw RESULT lines stay in
# BUILD_DIR/workqueue-results.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build="$root/build/bench-release"
n=1000000
runs=5
workloads="distinct_1w distinct_2w dedup_hot add_after_random rate_limited"
while getopts "n:r:w:B:" opt; do
  case $opt in
    n) n=$OPTARG ;;
    r) runs=$OPTARG ;;
    w) workloads=$OPTARG ;;
    B) build=$OPTARG ;;
    *) echo "usage: $0 [-n N] [-r RUNS] [-w \"workloads\"] [-B BUILD_DIR]" >&2; exit 2 ;;
  esac
done

echo "== building (Release, no sanitizers) in $build" >&2
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKUBE_SANITIZE= \
  -DKUBE_BUILD_SAMPLES=OFF >/dev/null
cmake --build "$build" --target kube-bench-workqueue >&2
(cd "$root/test/bench/go" && GOTOOLCHAIN=local go build -o "$build/go-bench-workqueue" ./cmd/workqueue)

results="$build/workqueue-results.txt"  # the raw RESULT lines of this run, kept
: >"$results"
for w in $workloads; do
  for ((i = 1; i <= runs; i++)); do
    echo "== $w run $i/$runs" >&2
    "$build/test/bench/workqueue/kube-bench-workqueue" "$w" "$n" | grep '^RESULT' >>"$results"
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
