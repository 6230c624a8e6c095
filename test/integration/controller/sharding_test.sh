#!/usr/bin/env bash
# Sharded controllers against the real cluster: replicas of kube-shard-replica
# (shard_replica.cpp; a controller<ConfigMap> with controller_params::sharding)
# over 1,000 ConfigMaps, checked with kubectl (an independent client).
# Each reconcile marks its ConfigMap in progress, waits 30 ms and clears the
# mark (both writes conditional on the resourceVersion read), so two replicas
# on one key at once show as a conflict or as a mark found set.
#   a. 1,000 ConfigMaps with data gen=1
#   b. replicas r1, r2, r3 (ring shard-test, Leases of 4 s)
#   c. every ConfigMap reconciled (gen 1), then the ring settles
#   d. gen=2 on all: each key reconciled exactly once, by one replica; balance
#   e. three held membership Leases
#   f. SIGKILL r2 in the middle of work: r1 and r3 take its keys within
#      lease + 6 s; its Lease is emptied
#   g. r4 joins and takes its share
#   h. no overlap: no conflict, and only the killed r2's marks were found set
#   i. SIGTERM r1, r3, r4 one by one: exit 0 within 20 s, Lease released, the
#      others take the leaver's keys (no overlap there either)
. "$(dirname "$0")/../lib.sh"
prog=${1:?usage: sharding_test.sh PATH_TO_kube-shard-replica}
export KUBECONFIG=$KUBE_TEST_KUBECONFIG_ADMIN
k() { kubectl "$@"; }
ns=sharding-$RANDOM$RANDOM
ring=shard-test
lease_s=4
n=1000
work=$(mktemp -d)
declare -A pid=()
cleanup() {
  local r
  for r in "${!pid[@]}"; do
    [[ -n "${pid[$r]}" ]] && { kill -9 "${pid[$r]}" 2>/dev/null || true; }
  done
  k delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  if ((failures > 0)) || [[ -n "${KUBE_TEST_KEEP_LOGS:-}" ]]; then
    ((failures == 0)) || for r in r1 r2 r3 r4; do
      [[ -f "$work/$r.log" ]] || continue
      echo "---- $r (last 40 lines) ----"
      tail -n 40 "$work/$r.log"
    done
    echo "logs kept in $work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }
# wait_for DESCRIPTION TIMEOUT_S COMMAND...: polls COMMAND every 0.5 s.
wait_for() {
  local what=$1 timeout=$2 deadline start
  shift 2
  start=$(now_ms)
  deadline=$((start + timeout * 1000))
  until "$@"; do
    if (($(now_ms) > deadline)); then
      fail "timed out after ${timeout}s waiting for: $what${detail:+ ($detail)}"
      return 1
    fi
    sleep 0.5
  done
  pass "$what ($(secs $(($(now_ms) - start))) s)"
}

# The ConfigMaps, one line each: name|gen|marker|reconciled-by|reconciled-gen
# (only cm-*: the namespace may hold others, e.g. kube-root-ca.crt).
snap=$work/snapshot
snapshot() {
  k -n "$ns" get configmaps -o 'jsonpath={range .items[*]}{.metadata.name}{"|"}{.data.gen}{"|"}{.metadata.annotations.test\.kube-cpp\.dev/in-progress}{"|"}{.metadata.annotations.test\.kube-cpp\.dev/reconciled-by}{"|"}{.metadata.annotations.test\.kube-cpp\.dev/reconciled-gen}{"\n"}{end}' \
    2>/dev/null | grep '^cm-' >"$snap.new" || true
  mv "$snap.new" "$snap"
}
# The membership Leases, one line each: name|holder|acknowledged view.
leases=$work/leases
lease_list() {
  k -n "$ns" get leases -l "sharding.kube-cpp.dev/ring=$ring" -o 'jsonpath={range .items[*]}{.metadata.name}{"|"}{.spec.holderIdentity}{"|"}{.metadata.annotations.sharding\.kube-cpp\.dev/view}{"\n"}{end}' \
    2>/dev/null >"$leases.new" || true
  mv "$leases.new" "$leases"
}
holders() { lease_list; awk -F'|' '$2 != "" { print $2 }' "$leases" | sort | paste -sd, -; }
holder_of() { lease_list; awk -F'|' -v l="$ring-shard-$1" '$1 == l { print $2; found = 1 } END { if (!found) print "<no lease>" }' "$leases"; }
# Counts by reconciled-by over the snapshot: "r1=..., r3=...".
by_counts() { awk -F'|' '{ c[$4 == "" ? "-" : $4]++ } END { for (b in c) printf "%s=%d\n", b, c[b] }' "$snap" | sort | paste -sd' ' -; }

# all_reconciled GEN [BY_REGEX]: the n ConfigMaps carry reconciled-gen GEN
# ("=": their own data.gen), no mark, and (with BY_REGEX) a reconciled-by
# matching it.
all_reconciled() {
  local got
  snapshot
  got=$(awk -F'|' -v g="$1" -v by="${2:-.*}" '$5 == (g == "=" ? $2 : g) && $3 == "" && $4 ~ ("^(" by ")$") { c++ } END { print c + 0 }' "$snap")
  detail="$got of $n; by: $(by_counts)"
  ((got == n))
}
# settled HOLDERS GEN [BY_REGEX]: the held Leases are exactly HOLDERS
# (comma-separated, sorted), each acknowledged that view, everything is
# reconciled, and nothing changed for 2 s.
settled() {
  local view=$1 before
  lease_list
  if [[ "$(awk -F'|' '$2 != "" { print $2 }' "$leases" | sort | paste -sd, -)" != "$view" ]] ||
    awk -F'|' -v v="$view" '$2 != "" && $3 != v { bad = 1 } END { exit !bad }' "$leases"; then
    detail="leases: $(tr '\n' ' ' <"$leases")"
    return 1
  fi
  all_reconciled "$2" "${3:-.*}" || return 1
  before=$(cat "$snap")
  sleep 2
  snapshot
  [[ "$(cat "$snap")" == "$before" ]] || { detail="still changing"; return 1; }
}

# configmap_list GEN: the n ConfigMaps as one List.
configmap_list() {
  awk -v n="$n" -v gen="$1" 'BEGIN {
    print "apiVersion: v1"; print "kind: List"; print "items:"
    for (i = 0; i < n; i++)
      printf "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-%04d\n  data:\n    gen: \"%s\"\n", i, gen
  }'
}

# Server-side: client-side apply of 1,000 objects costs kubectl minutes of CPU.
apply() { k -n "$ns" apply --server-side --field-manager=sharding-test -f "$1" >/dev/null; }

start_replica() {
  "$prog" --namespace "$ns" --identity "$1" --ring "$ring" --lease-seconds "$lease_s" >"$work/$1.log" 2>&1 &
  pid[$1]=$!
}
ready() { grep -q '^READY$' "$work/$1.log"; }
all_ready() { local r; for r in "$@"; do ready "$r" || return 1; done; }
logs() { cat "$work"/r*.log; }
show_logs() {
  local r
  for r in "$@"; do
    echo "---- $r (last 30 lines) ----"
    tail -n 30 "$work/$r.log"
  done
}

# a. 1,000 ConfigMaps.
k create namespace "$ns" >/dev/null
configmap_list 1 >"$work/gen1.yaml"
t0=$(now_ms)
if apply "$work/gen1.yaml"; then
  pass "created $n ConfigMaps with gen=1 in one kubectl apply --server-side ($(secs $(($(now_ms) - t0))) s)"
else
  fail "kubectl apply of $n ConfigMaps"
fi

# b. Three replicas.
for r in r1 r2 r3; do start_replica "$r"; done
wait_for "replicas r1 r2 r3 report READY (informers synced)" 60 all_ready r1 r2 r3

# c. Everything reconciled once, then the ring of three settles.
detail=
wait_for "all $n ConfigMaps reconciled at gen 1, no mark left" 120 all_reconciled 1
echo "  (by: $(by_counts))"
wait_for "the ring settles on r1,r2,r3 (every Lease acknowledged it, nothing changes for 2 s)" 60 settled r1,r2,r3 1

# d. Steady state: gen=2 on all; each key reconciled exactly once.
configmap_list 2 >"$work/gen2.yaml"
t0=$(now_ms)
apply "$work/gen2.yaml" || fail "kubectl apply of gen=2"
applied=$(now_ms)
wait_for "all $n ConfigMaps reconciled at gen 2" 120 all_reconciled 2
echo "  (kubectl apply took $(secs $((applied - t0))) s; reconciled $(secs $(($(now_ms) - t0))) s after it began)"
sleep 1  # late duplicates, if any, would show now
logs | awk -v p="$ns/cm-" '$1 == "RECONCILED" && $4 == "gen=2" && index($2, p) == 1 { print $2 }' | sort | uniq -c >"$work/gen2.count"
once=$(awk '$1 == 1' "$work/gen2.count" | wc -l)
more=$(awk '$1 > 1' "$work/gen2.count" | wc -l)
if ((once == n && more == 0)); then
  pass "each of the $n keys has exactly one RECONCILED gen=2 line across the logs"
else
  fail "RECONCILED gen=2: $once keys once, $more more than once (want $n and 0): $(awk '$1 > 1 { print $2 "x" $1 }' "$work/gen2.count" | head -10 | tr '\n' ' ')"
fi
counts=""
for r in r1 r2 r3; do
  c=$(awk -v p="$ns/cm-" -v r="$r" '$1 == "RECONCILED" && $4 == "gen=2" && index($2, p) == 1 && $3 == r' "$work/$r.log" | wc -l)
  counts+="$r=$c "
  if ((c >= 200)); then pass "balance: $r reconciled $c of the gen=2 keys (>= 200)"; else fail "balance: $r reconciled only $c of the gen=2 keys (want >= 200)"; fi
done
echo "  (gen=2 per replica: $counts)"

# e. Three held Leases.
got=$(holders)
[[ "$got" == "r1,r2,r3" ]] && pass "3 held membership Leases (holders $got)" ||
  fail "membership Lease holders: got [$got], want [r1,r2,r3]; leases: $(tr '\n' ' ' <"$leases")"

# f. SIGKILL r2 while it is busy: its keys move to r1 and r3. r2 is given
#    work first (gen=3 on the keys it reconciled last) and killed once it is
#    well into it, so it likely dies between a mark and its clear.
snapshot
awk -F'|' '$4 == "r2" { print $1 }' "$snap" >"$work/r2.keys"
r2_keys=$(wc -l <"$work/r2.keys")
awk 'BEGIN { print "apiVersion: v1"; print "kind: List"; print "items:" }
  { printf "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: %s\n  data:\n    gen: \"3\"\n", $1 }' \
  "$work/r2.keys" >"$work/gen3.yaml"
apply "$work/gen3.yaml" &
apply_pid=$!
r2_busy() { (($(grep -c '^RECONCILED .* gen=3$' "$work/r2.log" || true) >= 20)); }
wait_for "r2 busy with gen=3 on its $r2_keys keys (20 done)" 30 r2_busy
t0=$(now_ms)
kill -9 "${pid[r2]}"
wait "${pid[r2]}" 2>/dev/null || true
pid[r2]=
r2_done=$(grep -c '^RECONCILED .* gen=3$' "$work/r2.log" || true)
# (It ends long before r2's keys can move: a write of kubectl's between a
# survivor's mark and clear would look like an overlap.)
wait "$apply_pid" || fail "kubectl apply of gen=3 on r2's keys"
echo "  (SIGKILL r2, which had reconciled $r2_done of its $r2_keys keys at gen 3; the apply ended $(secs $(($(now_ms) - t0))) s after the kill)"
bound=$((lease_s + 6))
# Every ConfigMap reconciled at its own gen (2, or 3 for r2's) by r1 or r3;
# each poll's time is taken when it starts (the listing shows the state then
# or later).
moved() { all_reconciled = 'r1|r3'; }
took=
while (($(now_ms) - t0 < 60000)); do
  polled=$(now_ms)
  if moved; then took=$((polled - t0)); break; fi
  sleep 0.5
done
if [[ -n "$took" ]]; then
  if ((took <= bound * 1000)); then
    pass "r2's $r2_keys keys taken over by r1 and r3 in $(secs "$took") s (bound: lease ${lease_s} s + 6 s = ${bound} s)"
  else
    fail "r2's keys taken over in $(secs "$took") s, above the bound of ${bound} s (lease ${lease_s} s + 6 s)"
  fi
else
  fail "r2's keys not taken over after 60 s ($detail)"
fi
echo "  (by: $(by_counts))"
r2_emptied() { [[ -z "$(holder_of r2)" ]]; }
wait_for "r2's Lease emptied (holder \"\") by a survivor" 20 r2_emptied
# Where the time went, from the replicas' LOG lines (epoch seconds).
# since_kill REGEX: seconds from the kill to the first LOG line after it
# matching REGEX, in r1's and in r3's log.
since_kill() {
  local r t out=""
  for r in r1 r3; do
    t=$(awk -v t0="$t0" -v re="$1" '$1 == "LOG" && $2 * 1000 >= t0 && $0 ~ re { printf "%.1f", ($2 * 1000 - t0) / 1000; exit }' "$work/$r.log")
    out+="${out:+/}${t:-never}"
  done
  echo "$out s"
}
echo "  (after the kill, r1/r3: removed r2 $(since_kill 'removed member r2'); acknowledged [r1,r3] $(since_kill 'acknowledged view \\[r1,r3\\]'); agreed $(since_kill 'view \\[r1,r3\\] agreed'))"

# g. r4 joins.
start_replica r4
r4_share() {
  local c
  all_reconciled = || return 1
  c=$(awk -F'|' '$4 == "r4"' "$snap" | wc -l)
  [[ "$(holders)" == "r1,r3,r4" ]] || { detail="holders $(holders); r4 has $c"; return 1; }
  ((c >= 150)) || { detail="r4 has $c"; return 1; }
}
wait_for "r4 joined and took its share (>= 150 keys), all marks clear, holders r1,r3,r4" 90 r4_share
wait_for "the ring settles on r1,r3,r4" 60 settled r1,r3,r4 =
echo "  (by: $(by_counts))"

# h. No overlap: no lost conditional write; a mark found set is only ever
#    one the killed r2 left behind.
overlap_check() {
  local conflicts others stale
  conflicts=$(logs | grep -c '^OVERLAP-CONFLICT ' || true)
  others=$(logs | awk '$1 == "OVERLAP" && $3 != "r2"' | wc -l)
  stale=$(logs | awk '$1 == "OVERLAP" && $3 == "r2"' | wc -l)
  if ((conflicts == 0)); then pass "$1: no OVERLAP-CONFLICT in any log"; else
    fail "$1: $conflicts OVERLAP-CONFLICT lines: $(logs | grep '^OVERLAP-CONFLICT ' | head -5 | tr '\n' ' ')"
  fi
  if ((others == 0)); then pass "$1: every mark found set was r2's ($stale stale marks of the killed r2)"; else
    fail "$1: $others marks of live replicas found set: $(logs | awk '$1 == "OVERLAP" && $3 != "r2"' | head -5 | tr '\n' ' ')"
  fi
  errors=$(logs | grep -c '^ERROR ' || true)
  echo "  ($errors ERROR lines$( ((errors > 0)) && echo ": $(logs | grep '^ERROR ' | head -3 | tr '\n' ' ')"))"
}
overlap_check "overlap over the run"

# i. Graceful leaves, one by one: the others take the leaver's keys.
stop_replica() {
  local r=$1 t0 rc=0
  t0=$(now_ms)
  kill -TERM "${pid[$r]}"
  while kill -0 "${pid[$r]}" 2>/dev/null && (($(now_ms) - t0 < 20000)); do sleep 0.2; done
  if kill -0 "${pid[$r]}" 2>/dev/null; then
    fail "$r still running 20 s after SIGTERM"
    show_logs "$r"
    return
  fi
  wait "${pid[$r]}" || rc=$?
  pid[$r]=
  ((rc == 0)) && pass "SIGTERM $r: exit 0 in $(secs $(($(now_ms) - t0))) s" ||
    { fail "SIGTERM $r: exit status $rc"; show_logs "$r"; }
  local h
  h=$(holder_of "$r")
  [[ -z "$h" ]] && pass "$r's Lease released (holder \"\")" || fail "$r's Lease holder after exit: [$h]"
}
stop_replica r1
wait_for "r3 and r4 took r1's keys" 60 all_reconciled = 'r3|r4'
stop_replica r3
wait_for "r4 took r3's keys" 60 all_reconciled = 'r4'
stop_replica r4
overlap_check "overlap including the graceful leaves"
grep -h 'stopped after' "$work"/r[134].log | sed 's/^/  /' || true
finish
