#!/usr/bin/env bash
# Informer benchmark, ours vs client-go's SharedIndexInformer, in one run,
# against a real kube-apiserver + etcd started here (test/cluster).
#
#   test/bench/informer/run.sh [-n "10000 50000"] [-u 10000] [-r RUNS] [-B BUILD_DIR] [-s]
#
# For every N: creates N pods (~3.8 KB each as stored, plus ~2.8 KB of
# managedFields) in a fresh namespace with podload (Go, client-go), then RUNS
# times per implementation, alternating: start the informer, wait until it
# reports SYNCED, make U updates with podload, and let the informer exit
# once it has seen U update events. Each informer process reports its own
# time to sync, CPU seconds (user+sys, getrusage; in all, at SYNCED, and the
# system part of all), peak RSS, and RSS before and after the sync. -s gives both informers the strip-managedFields
# transform. Prints medians and ratios ours/client-go (< 1: ours uses less).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build="$root/build/bench-release"
sizes="10000 50000"
updates=10000
runs=3
strip=""
while getopts "n:u:r:B:s" opt; do
  case $opt in
    n) sizes=$OPTARG ;;
    u) updates=$OPTARG ;;
    r) runs=$OPTARG ;;
    B) build=$OPTARG ;;
    s) strip="--strip-managed-fields" ;;
    *) echo "usage: $0 [-n \"N ...\"] [-u UPDATES] [-r RUNS] [-B BUILD_DIR] [-s]" >&2; exit 2 ;;
  esac
done

echo "== building (Release, no sanitizers) in $build" >&2
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKUBE_SANITIZE= -DKUBE_BUILD_SAMPLES=OFF >/dev/null
cmake --build "$build" --target kube-bench-informer >&2
(cd "$root/test/bench/go" && GOTOOLCHAIN=local go build -o "$build/go-bench/" ./cmd/informer ./cmd/podload)
"$root/test/cluster/build.sh" "$build/bench-cluster" >&2

state=$(mktemp -d)
results=$(mktemp)
cleanup() {
  "$build/bench-cluster/kcluster" down --dir "$state" >/dev/null 2>&1 || true
  rm -rf "$state" "$results"
}
trap cleanup EXIT
"$build/bench-cluster/kcluster" up --dir "$state" --watch-pid $$ >&2
kc="$state/kubeconfig/admin-cert.yaml"
podload() { "$build/go-bench/podload" -kubeconfig "$kc" "$@"; }

# run_one IMPL NS N: one informer process; appends its RESULT line.
run_one() {
  local impl=$1 ns=$2 out
  out=$(mktemp)
  if [[ $impl == kube ]]; then
    "$build/test/bench/informer/kube-bench-informer" --kubeconfig "$kc" --namespace "$ns" --updates "$updates" $strip >"$out" &
  else
    "$build/go-bench/informer" -kubeconfig "$kc" -namespace "$ns" -updates "$updates" ${strip:+-strip-managed-fields} >"$out" &
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
    run_one kube "$ns" "$n"
    run_one client-go "$ns" "$n"
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
print(f"{'N':>7} {'metric':<22} {'kube':>12} {'client-go':>12} {'ratio':>7}")
for n in sorted(rows):
    k, g = rows[n].get("kube", []), rows[n].get("client-go", [])
    if not k or not g:
        print(f"{n:>7} missing results"); continue
    for label, fk, fg in [
        ("time to synced (s)", med(k, "sync_s"), med(g, "sync_s")),
        ("CPU seconds", med(k, "cpu_s"), med(g, "cpu_s")),
        ("  CPU to synced", med(k, "cpu_synced_s"), med(g, "cpu_synced_s")),
        ("  CPU in updates", upd(k), upd(g)),
        ("  of which system", med(k, "sys_s"), med(g, "sys_s")),
        ("peak RSS (MiB)", med(k, "maxrss_kb") / 1024, med(g, "maxrss_kb") / 1024),
        ("RSS/object (bytes)", per_obj(k, n), per_obj(g, n)),
        ("updates phase (s)", med(k, "updates_s"), med(g, "updates_s")),
    ]:
        print(f"{n:>7} {label:<22} {fk:>12.3f} {fg:>12.3f} {fk / fg if fg else float('nan'):>7.2f}")
PY
