#!/usr/bin/env bash
# Decode benchmark, ours vs client-go, in one run: how long each takes to
# turn one recorded PodList response into typed objects, with no network,
# TLS or informer in the way. Ours reads JSON; client-go is timed on the same
# JSON and on the same list in protobuf, the format its clientset asks for
# by default for built-in types. The list comes from a real kube-apiserver +
# etcd started here (test/cluster), filled by podload with the informer
# benchmark's pods (~6.6 KB of JSON each, managedFields included).
#
#   test/bench/decode/run.sh [-n "10000"] [-p PASSES] [-r RUNS] [-B BUILD_DIR]
#
# For every N: creates N pods, records `GET /api/v1/namespaces/NS/pods` with
# kubectl (JSON) and with client-go (protobuf), then RUNS times, alternating,
# runs each decoder process, which decodes its list PASSES times and reports
# the median pass (time and CPU).
# Prints the medians over runs and the ratios ours/client-go (< 1: ours is
# cheaper).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build="$root/build/bench-release"
sizes="10000"
passes=7
runs=3
while getopts "n:p:r:B:" opt; do
  case $opt in
    n) sizes=$OPTARG ;;
    p) passes=$OPTARG ;;
    r) runs=$OPTARG ;;
    B) build=$OPTARG ;;
    *) echo "usage: $0 [-n \"N ...\"] [-p PASSES] [-r RUNS] [-B BUILD_DIR]" >&2; exit 2 ;;
  esac
done

# shellcheck source=../tools/cluster_bench.sh
source "$root/test/bench/tools/cluster_bench.sh"
bench_build "$build" "kube-bench-decode" "./cmd/decode ./cmd/podload"
bench_cluster_up "$build"
results="$state/results"
: >"$results"

for n in $sizes; do
  ns=decode-$n
  echo "== creating $n pods in $ns" >&2
  "$build/go-bench/podload" -kubeconfig "$kc" -namespace "$ns" -workers 48 create "$n" >&2
  list="$state/pods-$n.json"
  proto="$state/pods-$n.pb"
  kubectl --kubeconfig "$kc" get --raw "/api/v1/namespaces/$ns/pods" >"$list"
  "$build/go-bench/decode" -record -kubeconfig "$kc" -namespace "$ns" "$proto"
  echo "== recorded $(stat -c %s "$list") bytes of JSON, $(stat -c %s "$proto") of protobuf" >&2
  for ((i = 1; i <= runs; i++)); do
    echo "== N=$n run $i/$runs" >&2
    "$build/test/bench/decode/kube-bench-decode" --passes "$passes" "$list" | sed "s/^RESULT /RESULT n=$n /" >>"$results"
    "$build/go-bench/decode" -passes "$passes" "$list" | sed "s/^RESULT /RESULT n=$n /" >>"$results"
    "$build/go-bench/decode" -passes "$passes" "$proto" | sed "s/^RESULT /RESULT n=$n /" >>"$results"
  done
  rm -f "$list" "$proto"
  kubectl --kubeconfig "$kc" delete namespace "$ns" --wait=false >/dev/null
done

python3 - "$results" "$runs" "$passes" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    rows.setdefault(int(f["n"]), {}).setdefault(f["impl"] + "/" + f["format"], []).append(f)
def med(rs, key):
    return statistics.median(float(r[key]) for r in rs)
print(f"decode benchmark: medians of {sys.argv[2]} runs, each the median of {sys.argv[3]} passes")
print(f"{'N':>7} {'metric':<18} {'kube (JSON)':>12} {'client-go JSON':>15} {'ratio':>6} {'client-go protobuf':>19} {'ratio':>6}")
for n in sorted(rows):
    k, gj, gp = (rows[n].get(x, []) for x in ("kube/json", "client-go/json", "client-go/protobuf"))
    if not k or not gj or not gp:
        print(f"{n:>7} missing results"); continue
    def line(label, fk, fj, fp):
        print(f"{n:>7} {label:<18} {fk:>12.1f} {fj:>15.1f} {fk / fj:>6.2f} {fp:>19.1f} {fk / fp:>6.2f}")
    line("bytes (MB)", float(k[0]["bytes"]) / 1e6, float(gj[0]["bytes"]) / 1e6, float(gp[0]["bytes"]) / 1e6)
    line("ms per list", med(k, "ms"), med(gj, "ms"), med(gp, "ms"))
    line("CPU ms per list", med(k, "cpu_ms"), med(gj, "cpu_ms"), med(gp, "cpu_ms"))
    line("peak RSS (MiB)", med(k, "maxrss_kb") / 1024, med(gj, "maxrss_kb") / 1024, med(gp, "maxrss_kb") / 1024)
PY
