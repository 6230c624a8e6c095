#!/usr/bin/env bash
# Decode benchmark, ours vs client-go, in one run: how long each takes to
# turn one recorded PodList response into typed objects, with no network,
# TLS or informer in the way. Both sides are timed on the same list in JSON
# and in protobuf (the format both typed clients ask for by default for
# built-in types); ours also on protobuf with every item decoded straight
# into its own shared_ptr, as the informer's list is (kube-shared). The
# list comes from a real kube-apiserver + etcd started here (test/cluster),
# filled by podload with the informer benchmark's pods (~6.6 KB of JSON
# each, managedFields included).
#
#   test/bench/decode/run.sh [-n "10000"] [-p PASSES] [-r RUNS] [-B BUILD_DIR] [-k DIR]
#
# For every N: creates N pods, records `GET /api/v1/namespaces/NS/pods` with
# kubectl (JSON) and with client-go asking for
# `application/vnd.kubernetes.protobuf` (protobuf), then RUNS times,
# alternating, runs each of the five decoder processes, which decodes its
# list PASSES times and reports the median pass (time and CPU).
# Prints the medians over runs and the ratios ours/client-go on the same
# format (< 1: ours is cheaper), and the live heap the decoded list holds
# per pod. -k keeps the recorded lists in DIR (pods-N.json, pods-N.pb),
# for profiling.
# The raw RESULT lines stay in BUILD_DIR/decode-results.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build="$root/build/bench-release"
sizes="10000"
passes=7
runs=3
keep=""
while getopts "n:p:r:B:k:" opt; do
  case $opt in
    n) sizes=$OPTARG ;;
    p) passes=$OPTARG ;;
    r) runs=$OPTARG ;;
    B) build=$OPTARG ;;
    k) keep=$OPTARG ;;
    *) echo "usage: $0 [-n \"N ...\"] [-p PASSES] [-r RUNS] [-B BUILD_DIR] [-k DIR]" >&2; exit 2 ;;
  esac
done

# shellcheck source=../tools/cluster_bench.sh
source "$root/test/bench/tools/cluster_bench.sh"
bench_build "$build" "kube-bench-decode" "./cmd/decode ./cmd/podload"
bench_cluster_up "$build"
results="$build/decode-results.txt"  # the raw RESULT lines of this run, kept
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
    "$build/test/bench/decode/kube-bench-decode" --passes "$passes" "$proto" | sed "s/^RESULT /RESULT n=$n /" >>"$results"
    "$build/test/bench/decode/kube-bench-decode" --passes "$passes" --shared "$proto" | sed "s/^RESULT /RESULT n=$n /" >>"$results"
    "$build/go-bench/decode" -passes "$passes" "$proto" | sed "s/^RESULT /RESULT n=$n /" >>"$results"
  done
  if [[ -n $keep ]]; then
    mkdir -p "$keep" && mv "$list" "$proto" "$keep/"
  else
    rm -f "$list" "$proto"
  fi
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
print("ratios: ours / client-go on the same format")
cols = [("kube/json", "kube JSON", None), ("client-go/json", "client-go JSON", None), (None, "ratio", ("kube/json", "client-go/json")),
        ("kube/protobuf", "kube protobuf", None), (None, "ratio", ("kube/protobuf", "client-go/protobuf")),
        ("kube-shared/protobuf", "kube pb shared", None), (None, "ratio", ("kube-shared/protobuf", "client-go/protobuf")),
        ("client-go/protobuf", "client-go protobuf", None)]
print(f"{'N':>7} {'metric':<18}" + "".join(f" {label:>{max(len(label), 7)}}" for _, label, _ in cols))
for n in sorted(rows):
    missing = [c for c, _, _ in cols if c and not rows[n].get(c)]
    if missing:
        print(f"{n:>7} missing results: {' '.join(missing)}"); continue
    def line(label, value):
        v = {c: value(rows[n][c]) for c, _, _ in cols if c}
        out = f"{n:>7} {label:<18}"
        for c, head, ratio in cols:
            w = max(len(head), 7)
            out += f" {v[ratio[0]] / v[ratio[1]]:>{w}.2f}" if ratio else f" {v[c]:>{w}.1f}"
        print(out)
    line("bytes (MB)", lambda rs: float(rs[0]["bytes"]) / 1e6)
    line("ms per list", lambda rs: med(rs, "ms"))
    line("CPU ms per list", lambda rs: med(rs, "cpu_ms"))
    line("peak RSS (MiB)", lambda rs: med(rs, "maxrss_kb") / 1024)
    line("heap/pod (bytes)", lambda rs: med(rs, "heap_per_item"))
PY
