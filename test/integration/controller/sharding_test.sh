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
#   e. three held membership Leases; each replica caches all 1,000
#      ConfigMaps (SIGUSR1: CACHE line)
#   f. SIGKILL r2 in the middle of work: r1 and r3 agree on the view
#      [r1,r3] within lease + 2 s of the kill (the hard bound: expiry within
#      the lease after r2's last renewal, one check period and the writes;
#      the later of their "view [r1,r3] agreed" LOG lines); every key
#      re-reconciled within 60 s (measured and printed: it includes the
#      survivors' work); r2's Lease is emptied
#   g. r4 joins and takes its share
#   h. no overlap: no conflict, and only the killed r2's marks were found set
#   i. SIGTERM r1, r3, r4 one by one: exit 0 within 20 s, Lease released, the
#      others take the leaver's keys (no overlap there either)
# Label mode (sharding_params::label_objects; --label-mode), in a second
# namespace with 1,000 new ConfigMaps, ring shard-labels:
#   j. replicas l1, l2, l3: every ConfigMap carries the label
#      shard.kube-cpp.dev/shard-labels=<one of them> and is reconciled, the
#      ring settles; each label equals the ConfigMap's reconciled-by
#   k. SIGUSR1: each replica's cache (CACHE line) holds 200..500 of them,
#      1,000 in all
#   l. gen=2 on all: each key reconciled exactly once
#   m. SIGKILL l2 in the middle of work: l1 and l3 agree within lease + 2 s;
#      its ConfigMaps relabelled to them and reconciled within 60 s; no
#      overlap (stale marks only of l2)
#   n. SIGTERM l1 (l3 takes its ConfigMaps), then l3: exit 0
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
namespaces=("$ns")
cleanup() {
  local r
  for r in "${!pid[@]}"; do
    [[ -n "${pid[$r]}" ]] && { kill -9 "${pid[$r]}" 2>/dev/null || true; }
  done
  for r in "${namespaces[@]}"; do k delete namespace "$r" --wait=false >/dev/null 2>&1 || true; done
  if ((failures > 0)) || [[ -n "${KUBE_TEST_KEEP_LOGS:-}" ]]; then
    ((failures == 0)) || for r in r1 r2 r3 r4 l1 l2 l3; do
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

# The ConfigMaps, one line each:
# name|gen|marker|reconciled-by|reconciled-gen|label shard.kube-cpp.dev/<ring>
# (only cm-*: the namespace may hold others, e.g. kube-root-ca.crt).
snap=$work/snapshot
snapshot() {
  k -n "$ns" get configmaps -o 'jsonpath={range .items[*]}{.metadata.name}{"|"}{.data.gen}{"|"}{.metadata.annotations.test\.kube-cpp\.dev/in-progress}{"|"}{.metadata.annotations.test\.kube-cpp\.dev/reconciled-by}{"|"}{.metadata.annotations.test\.kube-cpp\.dev/reconciled-gen}{"|"}{.metadata.labels.shard\.kube-cpp\.dev/'"$ring"'}{"\n"}{end}' \
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
# matching it; in label mode ($label_mode) also a label matching it.
label_mode=
all_reconciled() {
  local got
  snapshot
  got=$(awk -F'|' -v g="$1" -v by="${2:-.*}" -v lm="$label_mode" '$5 == (g == "=" ? $2 : g) && $3 == "" && $4 ~ ("^(" by ")$") && (lm == "" || ($6 != "" && $6 ~ ("^(" by ")$"))) { c++ } END { print c + 0 }' "$snap")
  detail="$got of $n; by: $(by_counts)${label_mode:+; labels: $(label_counts)}"
  ((got == n))
}
# Counts by label over the snapshot: "l1=..., l3=...".
label_counts() { awk -F'|' '{ c[$6 == "" ? "-" : $6]++ } END { for (b in c) printf "%s=%d\n", b, c[b] }' "$snap" | sort | paste -sd' ' -; }
# labels_match: in the snapshot, every ConfigMap's label equals its reconciled-by.
labels_match() {
  local same
  same=$(awk -F'|' '$6 != "" && $6 == $4 { c++ } END { print c + 0 }' "$snap")
  if ((same == n)); then pass "$1: the label of each of the $n ConfigMaps equals its reconciled-by"; else
    fail "$1: $((n - same)) ConfigMaps whose label differs from reconciled-by: $(awk -F'|' '$6 == "" || $6 != $4 { print $1 ":" $6 "/" $4 }' "$snap" | head -5 | tr '\n' ' ')"
  fi
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
  "$prog" --namespace "$ns" --identity "$1" --ring "$ring" --lease-seconds "$lease_s" ${label_mode:+--label-mode} \
    >"$work/$1.log" 2>&1 &
  pid[$1]=$!
}
ready() { grep -q '^READY$' "$work/$1.log"; }
all_ready() { local r; for r in "$@"; do ready "$r" || return 1; done; }
# The logs of this part's replicas (r*: hash mode; l*: label mode).
part=r
logs() { cat "$work"/"$part"*.log; }
# cache_of R: SIGUSR1 to R; its next CACHE line's count, RSS and peak (kB).
cache_of() {
  local r=$1 before i
  before=$(grep -c '^CACHE ' "$work/$r.log" || true)
  kill -USR1 "${pid[$r]}"
  for i in $(seq 1 50); do
    (($(grep -c '^CACHE ' "$work/$r.log" || true) > before)) && break
    sleep 0.1
  done
  grep '^CACHE ' "$work/$r.log" | tail -n 1 | awk '{ print $2, $4, $6 }'
}
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
# gen2_once REPLICA...: applies gen=2, waits for it, and checks the logs.
gen2_once() {
  local t0 applied once more counts r c
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
  for r in "$@"; do
    c=$(awk -v p="$ns/cm-" -v r="$r" '$1 == "RECONCILED" && $4 == "gen=2" && index($2, p) == 1 && $3 == r' "$work/$r.log" | wc -l)
    counts+="$r=$c "
    if ((c >= 200)); then pass "balance: $r reconciled $c of the gen=2 keys (>= 200)"; else fail "balance: $r reconciled only $c of the gen=2 keys (want >= 200)"; fi
  done
  echo "  (gen=2 per replica: $counts)"
}
gen2_once r1 r2 r3

# e. Three held Leases; without labels, each replica caches every ConfigMap.
got=$(holders)
[[ "$got" == "r1,r2,r3" ]] && pass "3 held membership Leases (holders $got)" ||
  fail "membership Lease holders: got [$got], want [r1,r2,r3]; leases: $(tr '\n' ' ' <"$leases")"
caches=""
for r in r1 r2 r3; do
  read -r c _ < <(cache_of "$r")
  caches+="$r=${c:-none} "
done
[[ "$caches" == "r1=$n r2=$n r3=$n " ]] && pass "hash mode: each replica's cache holds all $n ConfigMaps" ||
  fail "hash mode: the caches hold [$caches], want $n each"

# f. SIGKILL r2 while it is busy: its keys move to r1 and r3. r2 is given
#    work first (gen=3 on the keys it reconciled last) and killed once it is
#    well into it, so it likely dies between a mark and its clear. The hard
#    bound is on the membership: from the kill until both survivors agreed
#    on the view without r2 (lease + 2 s: r2's Lease expires within the
#    lease after its last renewal, before the kill; then one check period
#    and the writes). The time until every key is reconciled again includes
#    the survivors' work on ~300 keys; it is printed, bounded by 60 s.
# kill_busy VICTIM SURVIVOR1 SURVIVOR2
kill_busy() {
  local victim=$1 s1=$2 s2=$3 keys done_ apply_pid took agreed view
  snapshot
  awk -F'|' -v v="$victim" '$4 == v { print $1 }' "$snap" >"$work/$victim.keys"
  keys=$(wc -l <"$work/$victim.keys")
  awk 'BEGIN { print "apiVersion: v1"; print "kind: List"; print "items:" }
    { printf "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: %s\n  data:\n    gen: \"3\"\n", $1 }' \
    "$work/$victim.keys" >"$work/$victim.gen3.yaml"
  apply "$work/$victim.gen3.yaml" &
  apply_pid=$!
  busy() { (($(grep -c '^RECONCILED .* gen=3$' "$work/$victim.log" || true) >= 20)); }
  wait_for "$victim busy with gen=3 on its $keys keys (20 done)" 30 busy
  t0=$(now_ms)
  kill -9 "${pid[$victim]}"
  wait "${pid[$victim]}" 2>/dev/null || true
  pid[$victim]=
  done_=$(grep -c '^RECONCILED .* gen=3$' "$work/$victim.log" || true)
  # (It ends long before the keys can move: a write of kubectl's between a
  # survivor's mark and clear would look like an overlap.)
  wait "$apply_pid" || fail "kubectl apply of gen=3 on $victim's keys"
  echo "  (SIGKILL $victim, which had reconciled $done_ of its $keys keys at gen 3; the apply ended $(secs $(($(now_ms) - t0))) s after the kill)"
  view=$s1,$s2
  bound=$((lease_s + 2))
  # Membership: the later of the survivors' "view [s1,s2] agreed" LOG lines.
  agreed=
  while (($(now_ms) - t0 < 60000)); do
    agreed=$(agreed_after "$view" "$s1" "$s2") && break
    sleep 0.5
  done
  if [[ -n "$agreed" ]]; then
    if ((agreed <= bound * 1000)); then
      pass "$s1 and $s2 agreed on the view [$view] $(secs "$agreed") s after the kill (bound: lease ${lease_s} s + 2 s = ${bound} s)"
    else
      fail "$s1 and $s2 agreed on the view [$view] $(secs "$agreed") s after the kill, above the bound of ${bound} s (lease ${lease_s} s + 2 s)"
    fi
  else
    fail "$s1 and $s2 did not agree on the view [$view] within 60 s of the kill"
  fi
  # Every ConfigMap reconciled at its own gen (2, or 3 for the victim's) by
  # a survivor (in label mode: and labelled for one); each poll's time is
  # taken when it starts (the listing shows the state then or later).
  took=
  while (($(now_ms) - t0 < 60000)); do
    polled=$(now_ms)
    if all_reconciled = "$s1|$s2"; then took=$((polled - t0)); break; fi
    sleep 0.5
  done
  if [[ -n "$took" ]]; then
    pass "$victim's $keys keys ${label_mode:+relabelled and }reconciled by $s1 and $s2 $(secs "$took") s after the kill (bound 60 s)"
  else
    fail "$victim's keys not ${label_mode:+relabelled and }reconciled by $s1 and $s2 60 s after the kill ($detail)"
  fi
  echo "  (by: $(by_counts)${label_mode:+; labels: $(label_counts)})"
  emptied() { [[ -z "$(holder_of "$victim")" ]]; }
  wait_for "$victim's Lease emptied (holder \"\") by a survivor" 20 emptied
  # Where the time went, from the replicas' LOG lines (epoch seconds).
  echo "  (after the kill, $s1/$s2: removed $victim $(since_kill "removed member $victim" "$s1" "$s2"); acknowledged [$view] $(since_kill "acknowledged view [$view]" "$s1" "$s2"); agreed $(since_kill "view [$view] agreed" "$s1" "$s2"))"
}
# agreed_after VIEW R...: milliseconds from the kill (t0) to the later of
# the replicas' first LOG line "view [VIEW] agreed" after it (fails while
# one has none).
agreed_after() {
  local view=$1 r t max=0
  shift
  for r in "$@"; do
    t=$(awk -v t0="$t0" -v v="view [$view] agreed" '$1 == "LOG" && $2 * 1000 >= t0 + 0 && index($0, v) { printf "%d", $2 * 1000 - t0; exit }' "$work/$r.log")
    [[ -n "$t" ]] || return 1
    ((t > max)) && max=$t
  done
  echo "$max"
}
# since_kill TEXT R...: seconds from the kill to the first LOG line after it
# containing TEXT, in each replica's log.
since_kill() {
  local text=$1 r t out=""
  shift
  for r in "$@"; do
    t=$(awk -v t0="$t0" -v text="$text" '$1 == "LOG" && $2 * 1000 >= t0 + 0 && index($0, text) { printf "%.1f", ($2 * 1000 - t0) / 1000; exit }' "$work/$r.log")
    out+="${out:+/}${t:-never}"
  done
  echo "$out s"
}
kill_busy r2 r1 r3

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
# overlap_check WHAT KILLED
overlap_check() {
  local conflicts others stale killed=$2
  conflicts=$(logs | grep -c '^OVERLAP-CONFLICT ' || true)
  others=$(logs | awk -v k="$killed" '$1 == "OVERLAP" && $3 != k' | wc -l)
  stale=$(logs | awk -v k="$killed" '$1 == "OVERLAP" && $3 == k' | wc -l)
  if ((conflicts == 0)); then pass "$1: no OVERLAP-CONFLICT in any log"; else
    fail "$1: $conflicts OVERLAP-CONFLICT lines: $(logs | grep '^OVERLAP-CONFLICT ' | head -5 | tr '\n' ' ')"
  fi
  if ((others == 0)); then pass "$1: every mark found set was $killed's ($stale stale marks of the killed $killed)"; else
    fail "$1: $others marks of live replicas found set: $(logs | awk -v k="$killed" '$1 == "OVERLAP" && $3 != k' | head -5 | tr '\n' ' ')"
  fi
  errors=$(logs | grep -c '^ERROR ' || true)
  echo "  ($errors ERROR lines$( ((errors > 0)) && echo ": $(logs | grep '^ERROR ' | head -3 | tr '\n' ' ')"))"
}
overlap_check "overlap over the run" r2

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
overlap_check "overlap including the graceful leaves" r2
grep -h 'stopped after' "$work"/r[134].log | sed 's/^/  /' || true

# ---- Label mode: a second namespace, 1,000 new ConfigMaps, ring shard-labels.
ns=sharding-labels-$RANDOM$RANDOM
namespaces+=("$ns")
ring=shard-labels
label_mode=1
part=l
echo "-- label mode (namespace $ns, ring $ring)"
k create namespace "$ns" >/dev/null
t0=$(now_ms)
if apply "$work/gen1.yaml"; then
  pass "created $n ConfigMaps with gen=1 in $ns ($(secs $(($(now_ms) - t0))) s)"
else
  fail "kubectl apply of $n ConfigMaps in $ns"
fi

# j. l1, l2, l3 label every ConfigMap and reconcile it; the ring settles.
for r in l1 l2 l3; do start_replica "$r"; done
wait_for "replicas l1 l2 l3 report READY (informers synced)" 60 all_ready l1 l2 l3
wait_for "all $n ConfigMaps labelled shard.kube-cpp.dev/$ring=l1|l2|l3 and reconciled at gen 1" 120 all_reconciled 1 'l1|l2|l3'
echo "  (by: $(by_counts); labels: $(label_counts))"
wait_for "the ring settles on l1,l2,l3" 60 settled l1,l2,l3 1 'l1|l2|l3'
labels_match "after the start"

# k. Each replica's cache holds its share.
sum=0
caches=""
for r in l1 l2 l3; do
  read -r c rss hwm < <(cache_of "$r")
  c=${c:-0}
  sum=$((sum + c))
  caches+="$r=$c (RSS ${rss:-?} kB, peak ${hwm:-?} kB) "
  if ((c >= 200 && c <= 500)); then pass "$r's cache holds $c ConfigMaps (200..500)"; else
    fail "$r's cache holds $c ConfigMaps (want 200..500)"
  fi
done
echo "  (caches: $caches)"
total=$(k -n "$ns" get configmaps -o name | wc -l)
if ((sum == n && total == n)); then pass "the caches hold $sum ConfigMaps in all (the namespace has $total)"; else
  fail "the caches hold $sum ConfigMaps in all, want $n (the namespace has $total)"
fi

# l. gen=2 on all: each key reconciled exactly once.
gen2_once l1 l2 l3
snapshot
labels_match "after gen=2"

# m. SIGKILL l2 while it is busy: l1 and l3 relabel its ConfigMaps and reconcile them.
kill_busy l2 l1 l3
wait_for "the ring settles on l1,l3" 60 settled l1,l3 = 'l1|l3'
labels_match "after the kill"
overlap_check "label mode: overlap" l2

# n. Graceful leaves: l3 takes l1's ConfigMaps, then l3 stops.
stop_replica l1
wait_for "l3 took l1's ConfigMaps (labelled and reconciled)" 60 all_reconciled = 'l3'
stop_replica l3
overlap_check "label mode: overlap including the graceful leaves" l2
grep -h 'stopped after' "$work"/l[13].log | sed 's/^/  /' || true
finish
