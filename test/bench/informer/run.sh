#!/usr/bin/env bash
# Informer benchmark, ours vs client-go's SharedIndexInformer, in one run,
# against a real kube-apiserver + etcd started here (test/cluster).
#
#   test/bench/informer/run.sh [-n "10000 50000"] [-u 10000] [-r RUNS] [-B BUILD_DIR] [-s] [-J]
#
# For every N: creates N pods (~3.8 KB each as stored, plus ~2.8 KB of
# managedFields) in a fresh namespace with podload (Go, client-go), then RUNS
# times per implementation, alternating: start the informer, wait until it
# reports SYNCED, make U updates with podload, and let the informer exit
# once it has seen U update events. Each informer process reports its own
# time to sync, CPU seconds (user+sys, getrusage; in all, at SYNCED, and the
# system part of all), peak RSS, and RSS before and after the sync. -s gives both informers the strip-managedFields
# transform. Prints medians and ratios ours/client-go (< 1: ours uses less).
#
# client-go runs as a controller gets it by default: its clientset asks for
# protobuf for built-in types such as Pod, gzip-compressed; ours asks for
# JSON. -J adds a third process per run, client-go asked for JSON
# (impl client-go-json), and a second ratio column against it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build="$root/build/bench-release"
sizes="10000 50000"
updates=10000
runs=3
strip=""
impls="kube client-go"
while getopts "n:u:r:B:sJ" opt; do
  case $opt in
    n) sizes=$OPTARG ;;
    u) updates=$OPTARG ;;
    r) runs=$OPTARG ;;
    B) build=$OPTARG ;;
    s) strip="--strip-managed-fields" ;;
    J) impls="kube client-go client-go-json" ;;
    *) echo "usage: $0 [-n \"N ...\"] [-u UPDATES] [-r RUNS] [-B BUILD_DIR] [-s] [-J]" >&2; exit 2 ;;
  esac
done

# shellcheck source=../tools/cluster_bench.sh
source "$root/test/bench/tools/cluster_bench.sh"
bench_build "$build" "kube-bench-informer" "./cmd/informer ./cmd/podload"
bench_cluster_up "$build"
results="$state/results"
: >"$results"
podload() { "$build/go-bench/podload" -kubeconfig "$kc" "$@"; }

# run_one IMPL NS N: one informer process; appends its RESULT line.
run_one() {
  local impl=$1 ns=$2 out
  out=$(mktemp)
  if [[ $impl == kube ]]; then
    "$build/test/bench/informer/kube-bench-informer" --kubeconfig "$kc" --namespace "$ns" --updates "$updates" $strip >"$out" &
  else
    local json=""
    [[ $impl == client-go-json ]] && json=-json
    "$build/go-bench/informer" -kubeconfig "$kc" -namespace "$ns" -updates "$updates" ${strip:+-strip-managed-fields} $json >"$out" &
  fi
  local pid=$!
  for _ in $(seq 1 3000); do
    grep -q '^SYNCED' "$out" && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  grep -q '^SYNCED' "$out" || { echo "$impl did not sync:" >&2; cat "$out" >&2; exit 1; }
  podload -namespace "$ns" update "$updates" 2>/dev/null
  wait $pid
  grep '^RESULT' "$out" | sed "s/^RESULT /RESULT n=$3 /" >>"$results"
  rm -f "$out"
}

for n in $sizes; do
  ns=bench-$n
  echo "== creating $n pods in $ns" >&2
  podload -namespace "$ns" -workers 48 create "$n" >&2
  for ((i = 1; i <= runs; i++)); do
    echo "== N=$n run $i/$runs" >&2
    for impl in $impls; do run_one "$impl" "$ns" "$n"; done
  done
  kubectl --kubeconfig "$kc" delete namespace "$ns" --wait=false >/dev/null
done

python3 - "$results" "$runs" "$updates" "${strip:-none}" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    rows.setdefault(int(f["n"]), {}).setdefault(f["impl"], []).append(f)
def med(rs, key):
    return statistics.median(float(r[key]) for r in rs)
def upd(rs):
    return statistics.median(float(r["cpu_s"]) - float(r["cpu_synced_s"]) for r in rs)
def per_obj(rs, n):
    return statistics.median((float(r["rss_synced_kb"]) - float(r["rss_before_kb"])) * 1024 / n for r in rs)
print(f"informer benchmark: medians of {sys.argv[2]} runs, {sys.argv[3]} updates after sync, transform: {sys.argv[4]}")
json_col = any("client-go-json" in r for r in rows.values())
head = f"{'N':>7} {'metric':<22} {'kube':>12} {'client-go':>12} {'ratio':>7}"
if json_col:
    head += f" {'client-go JSON':>15} {'ratio':>7}"
print(head)
def metrics(rs, n):
    return [med(rs, "sync_s"), med(rs, "cpu_s"), med(rs, "cpu_synced_s"), upd(rs), med(rs, "sys_s"),
            med(rs, "maxrss_kb") / 1024, per_obj(rs, n), med(rs, "updates_s")]
labels = ["time to synced (s)", "CPU seconds", "  CPU to synced", "  CPU in updates", "  of which system",
          "peak RSS (MiB)", "RSS/object (bytes)", "updates phase (s)"]
for n in sorted(rows):
    k, g, j = rows[n].get("kube", []), rows[n].get("client-go", []), rows[n].get("client-go-json", [])
    if not k or not g or (json_col and not j):
        print(f"{n:>7} missing results"); continue
    mk, mg = metrics(k, n), metrics(g, n)
    mj = metrics(j, n) if json_col else None
    for i, label in enumerate(labels):
        line = f"{n:>7} {label:<22} {mk[i]:>12.3f} {mg[i]:>12.3f} {mk[i] / mg[i] if mg[i] else float('nan'):>7.2f}"
        if mj:
            line += f" {mj[i]:>15.3f} {mk[i] / mj[i] if mj[i] else float('nan'):>7.2f}"
        print(line)
PY
