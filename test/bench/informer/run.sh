#!/usr/bin/env bash
# Informer benchmark, ours vs client-go's SharedIndexInformer, in one run,
# against a real kube-apiserver + etcd started here (test/cluster).
#
#   test/bench/informer/run.sh [-w "pending status"] [-n "10000 50000"] [-u 10000] [-r RUNS] [-B BUILD_DIR] [-s] [-J] [-F]
#                              [-R] [-i "kube kube-list kube-json client-go client-go-json"] [-M]
#
# For every workload W and every N: creates N pods in a fresh namespace with
# podload (Go, client-go; test/bench/go/cmd/podload says what they look
# like), then RUNS times per implementation, alternating: start the
# informer, wait until it reports SYNCED, make U updates with podload, and
# let the informer exit once it has seen U update events. Each informer
# process reports its own time to sync, CPU seconds (user+sys, getrusage; in
# all, at SYNCED, and the system part of all), peak RSS, and RSS before and
# after the sync. -s gives both informers the strip-managedFields
# transform. Prints medians and ratios ours/client-go (< 1: ours uses less);
# every row names its workload and N.
# The raw RESULT lines stay in BUILD_DIR/informer-results.txt.
#
# Workloads (-w, default "pending"; several run one after the other):
#   pending  pods as created by their controllers (or kubectl run), never
#            scheduled: one managedFields entry each.
#   status   pods created on a node whose status (conditions, IPs,
#            containerStatuses, startTime) a second field manager, kubelet,
#            writes a second later: two managedFields entries each, one for
#            the status subresource.
#
# SYNCED means the same on both sides: the first list is in the cache and
# the event handler has been given every object of it (see the comments at
# the synced moment in informer_bench.cpp and test/bench/go/cmd/informer).
#
# Both run as a controller gets them by default: their typed clients ask
# for protobuf for built-in types such as Pod (the list gzip-compressed).
# kube's informer syncs by a streaming list (WatchList), client-go v0.34's
# by a list (its WatchListClient gate is off until 1.35); kube-list is kube
# with streaming lists off (informer_factory_params::streaming_list).
# -J adds kube-json (ours with client_params::json_only: list and watch in
# JSON) and client-go-json (client-go asked for JSON), one process each per
# run; every column's ratio is against client-go's default. -i names the
# implementations to run instead (any of kube, kube-json, client-go,
# client-go-json; client-go is needed for the ratios). Each kube process
# reports what the server answered its list and watch in (list_type,
# watch_type), and the table says so.
#
# -R adds a forced relist to every kube process (kube, kube-list,
# kube-json): once its updates are in, it records its steady RSS and live
# heap and prints STEADY; this script then stops it (SIGSTOP), kills the
# apiserver and starts it again, makes 100 more updates, compacts etcd,
# restarts the apiserver and lets the process go on (SIGCONT): its watch
# gets 410 and it syncs again (100 objects changed, the rest as cached), and the process reports the peak RSS and sampled live heap of
# that relist (see informer_bench.cpp). A second table gives peak / steady.
#
# -F adds the floors under the sync and the update phase: four more
# processes per run that receive the same pods and the same updates and do
# less with them (kube-bench-watch-floor, which syncs by a streaming list
# as our informer does: --mode tls: TLS bytes through Asio only;
# --mode tls-blocking: the same with blocking reads, no reactor;
# --mode watch: kube's typed watch without an informer; go-bench/watchfloor:
# client-go's HTTP/2 transport reading the gzip-compressed protobuf list
# and then the protobuf watch, nothing decoded). They print a second table:
# CPU to synced and per update event, and their ratios to client-go's
# informer.
#
# -M: the cost of metrics instead of the comparison with client-go. Runs
# ours only, with metrics off (impl kube) and on (kube-metrics:
# kube-bench-informer --metrics, client_params::metrics = a
# kube::prometheus::metrics, so the client's and the informer's hooks are
# live), the same pods and updates, RUNS times each, alternating one
# process per run (which goes first swaps from run to run). Prints the
# medians of both, the ratio on / off (> 1: metrics cost that much) and the
# range of the per-run ratios, for time to synced, CPU (in all, to synced,
# per update event), peak RSS and RSS/object; and what the hooks recorded
# (each metrics-on process's METRICS line: handler calls, processed deltas,
# lists, watches, requests). The raw lines stay in
# BUILD_DIR/informer-metrics-results.txt.
#
# KUBE_BUILD_LOCK=FILE: the build runs under `flock FILE` (a machine
# shared with other builds).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build="$root/build/bench-release"
workloads="pending"
sizes="10000 50000"
updates=10000
runs=3
strip=""
impls="kube client-go"
floors=""
relist=""
metrics=""
while getopts "w:n:u:r:B:sJFRi:M" opt; do
  case $opt in
    w) workloads=$OPTARG ;;
    n) sizes=$OPTARG ;;
    u) updates=$OPTARG ;;
    r) runs=$OPTARG ;;
    B) build=$OPTARG ;;
    s) strip="--strip-managed-fields" ;;
    J) impls="kube kube-json client-go client-go-json" ;;
    i) impls=$OPTARG ;;
    F) floors="floor-tls floor-tls-blocking floor-watch client-go-floor" ;;
    R) relist="--relist" ;;
    M) metrics=1 ;;
    *) echo "usage: $0 [-w \"pending status\"] [-n \"N ...\"] [-u UPDATES] [-r RUNS] [-B BUILD_DIR] [-s] [-J] [-F] [-R] [-i \"IMPL ...\"] [-M]" >&2; exit 2 ;;
  esac
done
if [[ -n $metrics ]]; then
  impls="kube kube-metrics"
  floors=""
fi
for i in $impls; do
  [[ $i == kube || $i == kube-list || $i == kube-json || $i == client-go || $i == client-go-json || $i == kube-metrics ]] ||
    { echo "$0: unknown implementation $i (kube, kube-list, kube-json, client-go, client-go-json, kube-metrics)" >&2; exit 2; }
done
for w in $workloads; do
  [[ $w == pending || $w == status ]] || { echo "$0: unknown workload $w (pending, status)" >&2; exit 2; }
done

# shellcheck source=../tools/cluster_bench.sh
source "$root/test/bench/tools/cluster_bench.sh"
bench_build "$build" "kube-bench-informer kube-bench-watch-floor" "./cmd/informer ./cmd/podload ./cmd/watchfloor"
bench_cluster_up "$build"
results="$build/informer-results.txt"  # the raw RESULT lines of this run, kept
[[ -n $metrics ]] && results="$build/informer-metrics-results.txt"
: >"$results"
podload() { "$build/go-bench/podload" -kubeconfig "$kc" "$@"; }

# wait_for_line WORD PID FILE TRIES: until FILE has a line starting with
# WORD, PID exits, or TRIES tenths of a second pass; fails without the line.
wait_for_line() {
  for _ in $(seq 1 "$4"); do
    grep -q "^$1" "$3" && return 0
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  grep -q "^$1" "$3"
}

# run_one IMPL NS N WORKLOAD: one informer process; appends its RESULT line.
run_one() {
  local impl=$1 ns=$2 out
  out=$(mktemp)
  local kube=""
  if [[ $impl == kube || $impl == kube-list || $impl == kube-json || $impl == kube-metrics ]]; then
    kube=1
    local mode=""
    [[ $impl == kube-json ]] && mode=--json
    [[ $impl == kube-list ]] && mode=--list
    [[ $impl == kube-metrics ]] && mode=--metrics
    "$build/test/bench/informer/kube-bench-informer" --kubeconfig "$kc" --namespace "$ns" --updates "$updates" $strip $mode $relist >"$out" &
  elif [[ $impl == floor-* ]]; then
    "$build/test/bench/informer/kube-bench-watch-floor" --kubeconfig "$kc" --namespace "$ns" --updates "$updates" --mode "${impl#floor-}" >"$out" &
  elif [[ $impl == client-go-floor ]]; then
    "$build/go-bench/watchfloor" -kubeconfig "$kc" -namespace "$ns" -updates "$updates" >"$out" &
  else
    local json=""
    [[ $impl == client-go-json ]] && json=-json
    "$build/go-bench/informer" -kubeconfig "$kc" -namespace "$ns" -updates "$updates" ${strip:+-strip-managed-fields} $json >"$out" &
  fi
  local pid=$!
  wait_for_line SYNCED $pid "$out" 3000 || { echo "$impl did not sync:" >&2; cat "$out" >&2; exit 1; }
  podload -namespace "$ns" update "$updates" 2>/dev/null
  if [[ -n $kube && -n $relist ]]; then
    wait_for_line STEADY $pid "$out" 600 || { echo "$impl did not reach STEADY:" >&2; cat "$out" >&2; exit 1; }
    # Cut off, the informer misses 100 updates and the history it would
    # need to catch up: stopped, its apiserver killed (SIGKILL: no shutdown
    # bookmark, no event left in its socket), the updates made, etcd
    # compacted and the apiserver restarted (its watch cache starts after
    # them). Let go on, its watch gets 410 and it syncs again.
    kill -STOP $pid
    "$build/bench-cluster/kcluster" kill-apiserver --dir "$state" >/dev/null
    "$build/bench-cluster/kcluster" start-apiserver --dir "$state" >/dev/null
    podload -namespace "$ns" update 100 2>/dev/null
    "$build/bench-cluster/kcluster" compact --dir "$state" >/dev/null
    "$build/bench-cluster/kcluster" restart-apiserver --dir "$state" >/dev/null
    kill -CONT $pid
  fi
  wait $pid
  grep '^RESULT' "$out" | sed "s/^RESULT /RESULT workload=$4 n=$3 /" >>"$results"
  { grep '^RELIST' "$out" || true; } | sed "s/^RELIST /RELIST workload=$4 n=$3 impl=$impl /" >>"$results"
  if [[ -n $metrics ]]; then
    { grep '^METRICS' "$out" || true; } | sed "s/^METRICS /METRICS workload=$4 n=$3 impl=$impl /" | tee -a "$results" >&2
  fi
  rm -f "$out"
}

for w in $workloads; do
  for n in $sizes; do
    ns=bench-$w-$n
    echo "== creating $n pods in $ns (workload $w)" >&2
    podload -namespace "$ns" -workers 48 -workload "$w" create "$n" >&2
    for ((i = 1; i <= runs; i++)); do
      echo "== $w N=$n run $i/$runs" >&2
      order="$impls $floors"
      # -M: odd runs metrics off first, even runs on first.
      [[ -n $metrics ]] && ((i % 2 == 0)) && order="kube-metrics kube"
      for impl in $order; do run_one "$impl" "$ns" "$n" "$w"; done
    done
    kubectl --kubeconfig "$kc" delete namespace "$ns" --wait=false >/dev/null
  done
done

if [[ -n $metrics ]]; then
  python3 - "$results" "$runs" "$updates" "${strip:-none}" <<'PY'
import statistics, sys
rows, seen = {}, {}
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    into = seen if line.startswith("METRICS") else rows
    if line.startswith("RELIST"):
        continue
    into.setdefault((f["workload"], int(f["n"])), {}).setdefault(f["impl"], []).append(f)
updates = int(sys.argv[3])
def values(r, n):
    cpu_upd = float(r["cpu_s"]) - float(r["cpu_synced_s"])
    return [float(r["sync_s"]), float(r["cpu_s"]), float(r["cpu_synced_s"]), cpu_upd, cpu_upd / updates * 1e6,
            float(r["sys_s"]), float(r["maxrss_kb"]) / 1024,
            (float(r["rss_synced_kb"]) - float(r["rss_before_kb"])) * 1024 / n, float(r["updates_s"])]
labels = ["time to synced (s)", "CPU seconds", "  CPU to synced", "  CPU in updates", "  us per update event",
          "  of which system", "peak RSS (MiB)", "RSS/object (bytes)", "updates phase (s)"]
print(f"informer, metrics off / on, kube only: medians of {sys.argv[2]} runs each, {updates} updates after sync, "
      f"transform: {sys.argv[4]}")
print("ratio = on / off of the medians (> 1: metrics cost that much; within 5%: <= 1.05); "
      "range = lowest and highest ratio of run i to run i")
print(f"{'workload':<8} {'N':>7} {'metric':<22} {'off':>10} {'on':>10} {'ratio':>7} {'range':>11}")
for (w, n), by in rows.items():
    off, on = by.get("kube", []), by.get("kube-metrics", [])
    if not off or not on:
        print(f"{w:<8} {n:>7} missing results"); continue
    a = [values(r, n) for r in off]
    b = [values(r, n) for r in on]
    for k, label in enumerate(labels):
        ma, mb = statistics.median(x[k] for x in a), statistics.median(x[k] for x in b)
        per_run = [y[k] / x[k] for x, y in zip(a, b) if x[k]]
        rng = f"{min(per_run):.2f}-{max(per_run):.2f}" if per_run else "-"
        print(f"{w:<8} {n:>7} {label:<22} {ma:>10.3f} {mb:>10.3f} {mb / ma if ma else float('nan'):>7.3f} {rng:>11}")
    rec = seen.get((w, n), {}).get("kube-metrics", [])
    if rec:
        med = lambda c: statistics.median(float(r[c]) for r in rec)
        print(f"{w:<8} {n:>7} recorded with metrics on (medians): handler calls {med('handler_calls'):.0f}, "
              f"processed {med('processed'):.0f}, lists {med('lists'):.0f}, watches {med('watches'):.0f}, "
              f"requests {med('requests'):.0f}")
PY
  exit 0
fi

python3 - "$results" "$runs" "$updates" "${strip:-none}" <<'PY'
import statistics, sys
rows = {}
relists = {}
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    into = relists if line.startswith("RELIST") else rows
    into.setdefault((f["workload"], int(f["n"])), {}).setdefault(f["impl"], []).append(f)
def med(rs, key):
    return statistics.median(float(r[key]) for r in rs)
def upd(rs):
    return statistics.median(float(r["cpu_s"]) - float(r["cpu_synced_s"]) for r in rs)
def per_obj(rs, n):
    return statistics.median((float(r["rss_synced_kb"]) - float(r["rss_before_kb"])) * 1024 / n for r in rs)
print(f"informer benchmark: medians of {sys.argv[2]} runs, {sys.argv[3]} updates after sync, transform: {sys.argv[4]}")
order = ["kube", "kube-list", "kube-json", "client-go", "client-go-json"]
heads = {"kube": "kube", "kube-list": "kube list", "kube-json": "kube JSON", "client-go": "client-go",
         "client-go-json": "client-go JSON"}
present = [i for i in order if any(i in r for r in rows.values())]
print("ratios: each implementation / client-go (its default: protobuf, list gzip-compressed)")
for impl in ("kube", "kube-list", "kube-json"):
    seen = sorted({(r.get("sync", "?"), r.get("list_type", "?"), r.get("watch_type", "?"))
                   for v in rows.values() for r in v.get(impl, [])})
    if seen:
        print(f"{impl}: synced by " + "; ".join(f"{s} (list {l}, watch {w})" for s, l, w in seen))
head = f"{'workload':<8} {'N':>7} {'metric':<22}"
for impl in present:
    head += f" {heads[impl]:>14}" + (f" {'ratio':>7}" if impl != "client-go" else "")
like = "kube-json" in present and "client-go-json" in present  # the same bytes on both sides
if like:
    head += f" {'JSON/JSON':>9}"
print(head)
def metrics(rs, n):
    return [med(rs, "sync_s"), med(rs, "cpu_s"), med(rs, "cpu_synced_s"), upd(rs),
            upd(rs) / int(sys.argv[3]) * 1e6, med(rs, "sys_s"),
            med(rs, "maxrss_kb") / 1024, per_obj(rs, n), med(rs, "updates_s")]
labels = ["time to synced (s)", "CPU seconds", "  CPU to synced", "  CPU in updates", "  us per update event",
          "  of which system", "peak RSS (MiB)", "RSS/object (bytes)", "updates phase (s)"]
for w, n in rows:
    if any(not rows[w, n].get(i) for i in present):
        print(f"{w:<8} {n:>7} missing results"); continue
    m = {i: metrics(rows[w, n][i], n) for i in present}
    base = m.get("client-go")
    for k, label in enumerate(labels):
        line = f"{w:<8} {n:>7} {label:<22}"
        for impl in present:
            line += f" {m[impl][k]:>14.3f}"
            if impl != "client-go":
                line += f" {m[impl][k] / base[k] if base and base[k] else float('nan'):>7.2f}"
        if like:
            j = m["client-go-json"][k]
            line += f" {m['kube-json'][k] / j if j else float('nan'):>9.2f}"
        print(line)
floor_impls = ["floor-tls-blocking", "floor-tls", "floor-watch", "client-go-floor", "kube", "client-go"]
if any("floor-tls" in r for r in rows.values()):
    print()
    print(f"floors: CPU to synced and per update event, medians of {sys.argv[2]} runs; ratios to client-go's informer")
    print(f"{'workload':<8} {'N':>7} {'process':<48} {'synced s':>9} {'CPU to synced':>13} {'ratio':>6} "
          f"{'us/event':>9} {'ratio':>6}")
    what = {"floor-tls-blocking": "TLS bytes only, blocking reads (OpenSSL)",
            "floor-tls": "kube: TLS bytes only (Asio + OpenSSL)", "floor-watch": "kube: typed watch, no informer",
            "client-go-floor": "client-go: HTTP/2 transport, bytes (list inflated)", "kube": "kube: informer",
            "client-go": "client-go: informer (default)"}
    for w, n in rows:
        if "client-go" not in rows[w, n]:
            continue
        base = upd(rows[w, n]["client-go"]) / int(sys.argv[3]) * 1e6
        base_sync = med(rows[w, n]["client-go"], "cpu_synced_s")
        for impl in floor_impls:
            if impl in rows[w, n]:
                rs = rows[w, n][impl]
                us = upd(rs) / int(sys.argv[3]) * 1e6
                cs = med(rs, "cpu_synced_s")
                print(f"{w:<8} {n:>7} {what[impl]:<48} {med(rs, 'sync_s'):>9.3f} {cs:>13.3f} {cs / base_sync:>6.2f} "
                      f"{us:>9.0f} {us / base:>6.2f}")
if relists:
    print()
    print(f"forced relist (etcd compacted, apiserver restarted), kube alone: medians of {sys.argv[2]} runs")
    print(f"{'workload':<8} {'N':>7} {'impl':<10} {'synced by':<10} {'steady RSS MiB':>14} {'peak RSS MiB':>12} "
          f"{'peak/steady':>11} {'steady heap MiB':>15} {'peak heap MiB':>13} {'peak/steady':>11} {'reused':>7}")
    for (w, n), by in relists.items():
        for impl in order:
            rs = by.get(impl)
            if not rs:
                continue
            how = "/".join(sorted({r["relist_sync"] for r in rs}))
            ratio = lambda a, b: statistics.median(float(r[a]) / float(r[b]) for r in rs)
            print(f"{w:<8} {n:>7} {impl:<10} {how:<10} {med(rs, 'steady_rss_kb') / 1024:>14.1f} "
                  f"{med(rs, 'peak_rss_kb') / 1024:>12.1f} {ratio('peak_rss_kb', 'steady_rss_kb'):>11.2f} "
                  f"{med(rs, 'steady_heap_kb') / 1024:>15.1f} {med(rs, 'peak_heap_kb') / 1024:>13.1f} "
                  f"{ratio('peak_heap_kb', 'steady_heap_kb'):>11.2f} {med(rs, 'reused'):>7.0f}")
PY
