#!/usr/bin/env bash
# Sharding benchmark: the memory of one replica of a sharded controller in
# label mode (sharding_params::label_objects: each replica's informers hold
# only the objects labelled for it) against one unsharded replica holding
# everything, against a real kube-apiserver + etcd started here
# (test/cluster).
#
#   test/bench/sharding/run.sh [-n CONFIGMAPS] [-s BYTES] [-r RUNS] [-B BUILD_DIR]
#
# The controller is kube-shard-replica (test/integration/controller/
# shard_replica.cpp, the replica of integration.sharding): a
# controller<ConfigMap> with 4 workers whose reconcile GETs the ConfigMap
# and writes it twice (an annotation set, 30 ms, cleared), its factory
# stripping managedFields. On SIGUSR1 it prints the objects in its primary
# informer's cache and its VmRSS and VmHWM (peak RSS).
#
# Workload: N ConfigMaps (-n, default 3000) in one namespace, each with a
# data payload of S bytes (-s, default 8192), created by kubectl apply
# --server-side. Then RUNS times (-r, default 3):
#   empty     one unsharded replica in an empty namespace: READY, 2 s, SIGUSR1
#   empty-label  one label-mode replica there: its view agreed, 2 s, SIGUSR1
#   unsharded one replica over the N ConfigMaps: every one reconciled by it
#             and no reconcile for 3 s, then SIGUSR1, SIGTERM
#   label     three label-mode replicas (a new ring each run, so every run
#             labels the ConfigMaps from scratch): every ConfigMap
#             reconciled, all three agreed on the view of three, no reconcile
#             for 3 s, then SIGUSR1 to each, SIGTERM
#   label-restarted  the same three again, on ConfigMaps already labelled for
#             them (a restart or a rollout of the same replicas): agreed,
#             every ConfigMap seen by its replica (reconciled or skipped as
#             up to date), quiet for 3 s, then SIGUSR1 to each, SIGTERM. The
#             label row's peak includes labelling from scratch (every
#             replica's informer of unlabelled objects holds them all at
#             first); this row is the steady state.
# Afterwards kubectl checks that each ConfigMap was reconciled by the
# replicas of that run (and, for label, by the one its label names).
# Prints medians over the runs (label: per run, the median of the three
# replicas); ratios label / unsharded. The raw RESULT lines stay in
# BUILD_DIR/sharding-results.txt.
#
# KUBE_BUILD_LOCK=FILE: the build runs under `flock FILE` (a machine
# shared with other builds).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build="$root/build/bench-release"
n=3000
size=8192
runs=3
while getopts "n:s:r:B:" opt; do
  case $opt in
    n) n=$OPTARG ;;
    s) size=$OPTARG ;;
    r) runs=$OPTARG ;;
    B) build=$OPTARG ;;
    *) echo "usage: $0 [-n CONFIGMAPS] [-s BYTES] [-r RUNS] [-B BUILD_DIR]" >&2; exit 2 ;;
  esac
done

# shellcheck source=../tools/cluster_bench.sh
source "$root/test/bench/tools/cluster_bench.sh"
# kube-shard-replica is a test program (KUBE_BUILD_TESTS, on by default in
# bench_build's configuration). bench_build also builds Go packages: podload
# is the one the other benchmarks build, not used here.
bench_build "$build" "kube-shard-replica" "./cmd/podload"
bench_cluster_up "$build"
export KUBECONFIG=$kc
replica_bin="$build/test/integration/controller/kube-shard-replica"
results="$build/sharding-results.txt"
: >"$results"
k() { kubectl "$@"; }
ns=bench-sharding
empty_ns=bench-sharding-empty

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# ---- the ConfigMaps: 4 kubectl processes, a quarter each.
k create namespace "$ns" >/dev/null
k create namespace "$empty_ns" >/dev/null
echo "== creating $n ConfigMaps of $size bytes in $ns" >&2
t0=$(now_ms)
for part in 0 1 2 3; do
  awk -v n="$n" -v s="$size" -v part="$part" 'BEGIN {
    p = ""
    while (length(p) < s) p = p "0123456789abcdefghijklmnopqrstuvwxyz"
    p = substr(p, 1, s)
    print "apiVersion: v1"; print "kind: List"; print "items:"
    for (i = part; i < n; i += 4)
      printf "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-%05d\n  data:\n    gen: \"1\"\n    payload: \"%s\"\n", i, p
  }' >"$state/cms-$part.yaml"
done
for part in 0 1 2 3; do
  k -n "$ns" apply --server-side --field-manager=sharding-bench -f "$state/cms-$part.yaml" >/dev/null &
done
wait
rm -f "$state"/cms-*.yaml
got=$(k -n "$ns" get configmaps -o name | grep -c '^configmap/cm-' || true)
((got == n)) || { echo "created $got ConfigMaps, want $n" >&2; exit 1; }
echo "== created in $(awk -v ms=$(($(now_ms) - t0)) 'BEGIN { printf "%.1f", ms / 1000 }') s" >&2

declare -A pid=()
start() {  # start ID NS ARGS...: a replica, its output in $state/ID.log
  local id=$1 where=$2
  shift 2
  "$replica_bin" --namespace "$where" --identity "$id" "$@" >"$state/$id.log" 2>&1 &
  pid[$id]=$!
}
alive() { local id; for id in "$@"; do kill -0 "${pid[$id]}" 2>/dev/null || { echo "$id exited:" >&2; tail -n 20 "$state/$id.log" >&2; exit 1; }; done; }
# wait_until SECONDS WHAT COMMAND... (the replicas in the array watch must stay alive)
watch=()
wait_until() {
  local limit=$1 what=$2 deadline
  shift 2
  deadline=$(($(now_ms) + limit * 1000))
  until "$@"; do
    alive "${watch[@]}"
    (($(now_ms) < deadline)) || { echo "timed out after ${limit}s waiting for $what" >&2; exit 1; }
    sleep 0.5
  done
}
ready() { local id; for id in "$@"; do grep -q '^READY$' "$state/$id.log" || return 1; done; }
agreed() {  # agreed VIEW ID...: each replica logged "view [VIEW] agreed"
  local view=$1 id
  shift
  for id in "$@"; do grep -qF "view [$view] agreed" "$state/$id.log" || return 1; done
}
# done_and_quiet ID...: every ConfigMap has a RECONCILED line in the
# replicas' logs and their number did not change for 3 s.
last_lines=-1
quiet_since=0
done_and_quiet() {
  local keys lines id files=()
  for id in "$@"; do files+=("$state/$id.log"); done
  keys=$(cat "${files[@]}" | awk '$1 == "RECONCILED" { print $2 }' | sort -u | wc -l)
  lines=$(cat "${files[@]}" | grep -c '^RECONCILED ' || true)
  if ((lines != last_lines)); then
    last_lines=$lines
    quiet_since=$(now_ms)
    return 1
  fi
  ((keys == n && $(now_ms) - quiet_since >= 3000))
}
# report MODE RUN ID...: SIGUSR1 to each replica, its CACHE line -> RESULT.
report() {
  local mode=$1 run=$2 id before i line
  shift 2
  for id in "$@"; do
    before=$(grep -c '^CACHE ' "$state/$id.log" || true)
    kill -USR1 "${pid[$id]}"
    for i in $(seq 1 100); do
      (($(grep -c '^CACHE ' "$state/$id.log" || true) > before)) && break
      sleep 0.1
    done
    line=$(grep '^CACHE ' "$state/$id.log" | tail -n 1)
    [[ -n $line ]] || { echo "$id printed no CACHE line" >&2; exit 1; }
    # CACHE <n> RSS_KB <kb> HWM_KB <kb>
    echo "RESULT run=$run mode=$mode id=$id $(awk '{ print "cache=" $2, "rss_kb=" $4, "hwm_kb=" $6 }' <<<"$line")" |
      tee -a "$results" >&2
  done
}
stop() {
  local id rc
  for id in "$@"; do kill -TERM "${pid[$id]}"; done
  for id in "$@"; do
    rc=0
    wait "${pid[$id]}" || rc=$?
    ((rc == 0)) || { echo "$id exited with $rc after SIGTERM:" >&2; tail -n 20 "$state/$id.log" >&2; exit 1; }
    if grep -q '^OVERLAP-CONFLICT \|^OVERLAP ' "$state/$id.log"; then
      echo "warning: $id found an overlap: $(grep -m 3 '^OVERLAP' "$state/$id.log" | tr '\n' ' ')" >&2
    fi
  done
}
# check BY_REGEX LABEL_KEY: kubectl sees every ConfigMap reconciled by one
# of BY_REGEX (and, with LABEL_KEY, labelled for the replica that did).
check() {
  local by=$1 label=${2:-} bad
  local path='{range .items[*]}{.metadata.name}{"|"}{.metadata.annotations.test\.kube-cpp\.dev/reconciled-by}{"|"}'
  [[ -n $label ]] && path+="{.metadata.labels.${label//./\\.}}"
  path+='{"\n"}{end}'
  bad=$(k -n "$ns" get configmaps -o "jsonpath=$path" | awk -F'|' -v by="$by" -v l="$label" \
    '$1 ~ /^cm-/ && ($2 !~ ("^(" by ")$") || (l != "" && $3 != $2)) { c++ } END { print c + 0 }')
  ((bad == 0)) || { echo "kubectl: $bad ConfigMaps not reconciled by [$by]${label:+ or not labelled for it}" >&2; exit 1; }
}

for ((run = 1; run <= runs; run++)); do
  echo "== run $run/$runs" >&2
  # Baselines: nothing to cache.
  watch=("e$run")
  start "e$run" "$empty_ns" --unsharded
  wait_until 60 "e$run READY" ready "e$run"
  sleep 2
  report empty "$run" "e$run"
  stop "e$run"
  watch=("el$run")
  start "el$run" "$empty_ns" --ring "bench-empty-$run" --label-mode
  wait_until 60 "el$run's view agreed" agreed "el$run" "el$run"
  sleep 2
  report empty-label "$run" "el$run"
  stop "el$run"

  # One unsharded replica over everything.
  id="u$run"
  watch=("$id")
  t0=$(now_ms)
  start "$id" "$ns" --unsharded
  last_lines=-1
  wait_until 600 "$id to reconcile the $n ConfigMaps" done_and_quiet "$id"
  echo "   unsharded: reconciled in $(( ($(now_ms) - t0) / 1000 )) s" >&2
  report unsharded "$run" "$id"
  stop "$id"
  check "$id"

  # Three label-mode replicas: a new ring each run.
  ids=("l1-$run" "l2-$run" "l3-$run")
  view=$(printf '%s\n' "${ids[@]}" | LC_ALL=C sort | paste -sd, -)
  watch=("${ids[@]}")
  t0=$(now_ms)
  for id in "${ids[@]}"; do start "$id" "$ns" --ring "bench-$run" --label-mode; done
  last_lines=-1
  label_done() { agreed "$view" "${ids[@]}" && done_and_quiet "${ids[@]}"; }
  wait_until 600 "the label-mode replicas to label and reconcile the $n ConfigMaps" label_done
  echo "   label mode: labelled and reconciled in $(( ($(now_ms) - t0) / 1000 )) s" >&2
  report label "$run" "${ids[@]}"
  stop "${ids[@]}"
  check "$(IFS='|'; echo "${ids[*]}")" "shard.kube-cpp.dev/bench-$run"

  # The same three again: the ConfigMaps are labelled for them already.
  for id in "${ids[@]}"; do mv "$state/$id.log" "$state/$id.first.log"; done
  for id in "${ids[@]}"; do start "$id" "$ns" --ring "bench-$run" --label-mode; done
  last_lines=-1
  seen_and_quiet() {  # like done_and_quiet, counting SKIP lines too
    local keys lines id files=()
    for id in "$@"; do files+=("$state/$id.log"); done
    keys=$(cat "${files[@]}" | awk '$1 == "RECONCILED" || $1 == "SKIP" { print $2 }' | sort -u | wc -l)
    lines=$(cat "${files[@]}" | grep -cE '^(RECONCILED|SKIP) ' || true)
    if ((lines != last_lines)); then
      last_lines=$lines
      quiet_since=$(now_ms)
      return 1
    fi
    ((keys == n && $(now_ms) - quiet_since >= 3000))
  }
  restarted_done() { agreed "$view" "${ids[@]}" && seen_and_quiet "${ids[@]}"; }
  wait_until 600 "the restarted label-mode replicas to see their ConfigMaps" restarted_done
  report label-restarted "$run" "${ids[@]}"
  stop "${ids[@]}"
  check "$(IFS='|'; echo "${ids[*]}")" "shard.kube-cpp.dev/bench-$run"
done

python3 - "$results" "$n" "$size" "$runs" <<'PY'
import statistics, sys
path, n, size, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rows = {}
for line in open(path):
    f = dict(kv.split("=", 1) for kv in line.split()[1:])
    # VmHWM may trail VmRSS by a little (the kernel updates it lazily).
    f["hwm_kb"] = str(max(float(f["hwm_kb"]), float(f["rss_kb"])))
    rows.setdefault((f["mode"], int(f["run"])), []).append(f)
def per_run(mode, key):
    """Per run: the value (label: the median of the replicas)."""
    return [statistics.median(float(r[key]) for r in rows[(mode, i)]) for i in range(1, runs + 1) if (mode, i) in rows]
med = lambda xs: statistics.median(xs)
mib = 1 / 1024
u_rss, u_hwm, u_cache = med(per_run("unsharded", "rss_kb")), med(per_run("unsharded", "hwm_kb")), med(per_run("unsharded", "cache"))
l_rss, l_hwm, l_cache = med(per_run("label", "rss_kb")), med(per_run("label", "hwm_kb")), med(per_run("label", "cache"))
r_rss, r_hwm, r_cache = (med(per_run("label-restarted", "rss_kb")), med(per_run("label-restarted", "hwm_kb")),
                         med(per_run("label-restarted", "cache")))
e_rss, e_hwm = med(per_run("empty", "rss_kb")), med(per_run("empty", "hwm_kb"))
el_rss, el_hwm = med(per_run("empty-label", "rss_kb")), med(per_run("empty-label", "hwm_kb"))
l_sum = med([sum(float(r["rss_kb"]) for r in rows[("label", i)]) for i in range(1, runs + 1) if ("label", i) in rows])
caches = sorted(int(r["cache"]) for i in range(1, runs + 1) for r in rows.get(("label", i), []))
print(f"sharding benchmark: {n} ConfigMaps of {size} bytes of data, medians of {runs} runs "
      f"(label mode: per run the median of its 3 replicas)")
print(f"{'':<34} {'unsharded':>10} {'label mode':>11} {'label/unsharded':>16}")
print(f"{'objects in the cache':<34} {u_cache:>10.0f} {l_cache:>11.0f} {l_cache / u_cache:>16.2f}")
print(f"{'RSS (MiB)':<34} {u_rss * mib:>10.1f} {l_rss * mib:>11.1f} {l_rss / u_rss:>16.2f}")
print(f"{'peak RSS (MiB)':<34} {u_hwm * mib:>10.1f} {l_hwm * mib:>11.1f} {l_hwm / u_hwm:>16.2f}")
print(f"{'RSS, empty namespace (MiB)':<34} {e_rss * mib:>10.1f} {el_rss * mib:>11.1f}")
print(f"{'RSS above the empty one (MiB)':<34} {(u_rss - e_rss) * mib:>10.1f} {(l_rss - el_rss) * mib:>11.1f} "
      f"{(l_rss - el_rss) / (u_rss - e_rss):>16.2f}")
print(f"{'peak RSS above the empty one (MiB)':<34} {(u_hwm - e_hwm) * mib:>10.1f} {(l_hwm - el_hwm) * mib:>11.1f} "
      f"{(l_hwm - el_hwm) / (u_hwm - e_hwm):>16.2f}")
print(f"label mode, restarted on labelled objects: cache {r_cache:.0f} ({r_cache / u_cache:.2f}), "
      f"RSS {r_rss * mib:.1f} MiB ({r_rss / u_rss:.2f}), peak {r_hwm * mib:.1f} MiB ({r_hwm / u_hwm:.2f}), "
      f"above the empty one {(r_rss - el_rss) * mib:.1f} MiB ({(r_rss - el_rss) / (u_rss - e_rss):.2f}), "
      f"peak above the empty one {(r_hwm - el_hwm) * mib:.1f} MiB ({(r_hwm - el_hwm) / (u_hwm - e_hwm):.2f})")
print(f"label mode: 3 replicas' RSS together {l_sum * mib:.1f} MiB ({l_sum / u_rss:.2f} x one unsharded replica); "
      f"cache per replica {caches[0]}..{caches[-1]} objects over all runs")
PY
