#!/usr/bin/env bash
# Workqueue benchmark, ours vs client-go's util/workqueue, in one run.
#
#   test/bench/workqueue/run.sh [-n N] [-r RUNS] [-w "workload ..."] [-b BATCH] [-B BUILD_DIR]
#
# Builds kube-bench-workqueue (Release, no sanitizers) into BUILD_DIR (default
# build/bench-release) and the client-go peer (test/bench/go/cmd/workqueue,
# GOTOOLCHAIN=local), runs every workload RUNS times per implementation
# (alternating, one process per run) and prints medians: ns/op of each, the
# ratio ours/client-go (< 1 means ours is faster), and CPU seconds and peak
# RSS of each process.
# -b sets the producer's pattern on BOTH sides (KUBE_BENCH_PRODUCER_BATCH):
# 0 (default) = the producer adds without ever yielding, the same loop on
# both sides; B = it yields after every B adds (ours: co_await post;
# client-go: runtime.Gosched(), which is not free for Go: see
# docs/performance.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build="$root/build/bench-release"
n=1000000
runs=5
batch=0
workloads="distinct_1w distinct_2w distinct_1w_xthread dedup_hot add_after_random rate_limited"
while getopts "n:r:w:b:B:" opt; do
  case $opt in
    n) n=$OPTARG ;;
    r) runs=$OPTARG ;;
    w) workloads=$OPTARG ;;
    b) batch=$OPTARG ;;
    B) build=$OPTARG ;;
    *) echo "usage: $0 [-n N] [-r RUNS] [-w \"workloads\"] [-b BATCH] [-B BUILD_DIR]" >&2; exit 2 ;;
  esac
done

echo "== building (Release, no sanitizers) in $build" >&2
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKUBE_SANITIZE= \
  -DKUBE_BUILD_SAMPLES=OFF >/dev/null
cmake --build "$build" --target kube-bench-workqueue >&2
(cd "$root/test/bench/go" && GOTOOLCHAIN=local go build -o "$build/go-bench-workqueue" ./cmd/workqueue)

results=$(mktemp)
trap 'rm -f "$results"' EXIT
for w in $workloads; do
  for ((i = 1; i <= runs; i++)); do
    echo "== $w run $i/$runs" >&2
    export KUBE_BENCH_PRODUCER_BATCH=$batch
    "$build/test/bench/workqueue/kube-bench-workqueue" "$w" "$n" | grep '^RESULT' >>"$results"
    "$build/go-bench-workqueue" "$w" "$n" | grep '^RESULT' >>"$results"
  done
done

python3 - "$results" "$runs" "$batch" <<'PY'
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
b = sys.argv[3]
pattern = "producers never yield" if b == "0" else f"producers yield every {b} adds"
print(f"medians of {sys.argv[2]} runs; {pattern} (both sides); "
      "ratio = ours / client-go (lower is better; target <= 0.33)")
print("| workload | n | ns/op ours | ns/op client-go | ratio | CPU s ours | CPU s client-go | peak RSS ours (MiB) | peak RSS client-go (MiB) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for k in order:
    a, b = rows[k]["kube"], rows[k]["client-go"]
    ra, rb = med(a, 0), med(b, 0)
    print(f"| {k} | {a[0][3]} | {ra:.1f} | {rb:.1f} | {ra / rb:.2f} | {med(a, 1):.2f} | {med(b, 1):.2f} | "
          f"{med(a, 2) / 1024:.1f} | {med(b, 2) / 1024:.1f} |")
PY
