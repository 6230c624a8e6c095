#!/usr/bin/env bash
# Two replicas of samples/leader-election against the real cluster, observed
# through the Lease with kubectl:
#   1. exactly one leads (holderIdentity names it, only its log says "leading");
#   2. SIGKILL the leader (no release): the other takes over after the lease
#      expires: the new leader's acquireTime is within lease_duration + one
#      jittered retry period (+ request slack) of the kill, and not before
#      lease_duration - one jittered retry period;
#   3. SIGTERM the new leader: it exits 0 and the Lease shows an empty holder
#      with leaseDurationSeconds=1 (released);
#   4. each leadership was recorded as an Event on the Lease.
. "$(dirname "$0")/../../test/integration/lib.sh"
prog=${1:?usage: test.sh PATH_TO_leader-election}
export KUBECONFIG=$KUBE_TEST_KUBECONFIG_ADMIN
k() { kubectl "$@"; }
ns=leader-sample-$RANDOM$RANDOM
lease=sample-lock
lease_s=4 renew_s=3 retry_ms=500
logs=$(mktemp -d)
declare -A pid
cleanup() {
  for p in "${pid[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  k delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$logs"
}
trap cleanup EXIT

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
holder() { k -n "$ns" get lease "$lease" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
start_replica() {
  "$prog" --identity "$1" -n "$ns" --lease "$lease" --lease-duration $lease_s --renew-deadline $renew_s \
    --retry-period $retry_ms >"$logs/$1.log" 2>&1 &
  pid[$1]=$!
}
# wait_for DESCRIPTION TIMEOUT_S COMMAND...: polls COMMAND every 0.1 s.
wait_for() {
  local what=$1 timeout=$2 deadline
  shift 2
  deadline=$(( $(now_ms) + timeout * 1000 ))
  until "$@"; do
    if (( $(now_ms) > deadline )); then fail "timed out after ${timeout}s waiting for: $what"; return 1; fi
    sleep 0.1
  done
}
someone_holds() { [[ -n "$(holder)" ]]; }

k create namespace "$ns" >/dev/null
start_replica alpha
start_replica beta

# 1. Exactly one leader.
wait_for "a holder in the Lease" 20 someone_holds || { finish; exit 1; }
leader=$(holder)
case $leader in
  alpha) other=beta ;;
  beta) other=alpha ;;
  *) fail "unexpected holder '$leader'"; finish; exit 1 ;;
esac
sleep 2  # let both settle; the follower has observed several renewals by now
[[ "$(holder)" == "$leader" ]] && pass "holder stays $leader" || fail "holder changed to '$(holder)' without a failure"
grep -q "^\[$leader\] leading$" "$logs/$leader.log" && pass "$leader's log says leading" || fail "$leader did not report leading"
if grep -q "leading$" "$logs/$other.log"; then fail "$other also claims to lead: $(cat "$logs/$other.log")"; else pass "$other does not lead"; fi
grep -q "new leader: $leader" "$logs/$other.log" && pass "$other observed $leader as leader" || fail "$other did not report the new leader"

# 2. SIGKILL the leader: no release, so the Lease must expire first.
t0=$(now_ms)
kill -9 "${pid[$leader]}"
wait "${pid[$leader]}" 2>/dev/null || true
unset "pid[$leader]"
[[ "$(holder)" == "$leader" ]] && pass "the killed leader did not release" || fail "holder is '$(holder)' right after SIGKILL"
other_holds() { [[ "$(holder)" == "$other" ]]; }
if wait_for "$other to take over" 20 other_holds; then
  seen=$(( $(now_ms) - t0 ))
  # When it took over: the acquireTime the new leader wrote (its wall clock,
  # this machine's), so kubectl's polling latency does not count.
  acquired=$(k -n "$ns" get lease "$lease" -o jsonpath='{.spec.acquireTime}')
  elapsed=$(( $(date -d "$acquired" +%s%3N) - t0 ))
  max=$(( lease_s * 1000 + retry_ms * 22 / 10 + 1200 ))  # lease + one jittered retry (1 + 1.2) + requests on a loaded CI machine
  min=$(( lease_s * 1000 - retry_ms * 22 / 10 - 300 ))   # it waited for expiry, it did not steal
  echo "takeover after SIGKILL: ${elapsed} ms by acquireTime ($acquired), seen by kubectl after ${seen} ms; allowed ${min}..${max} ms"
  (( elapsed <= max )) && pass "takeover within lease duration + retry slack (${elapsed} ms <= ${max} ms)" \
    || fail "takeover took ${elapsed} ms > ${max} ms"
  (( elapsed >= min )) && pass "takeover only after expiry (${elapsed} ms >= ${min} ms)" \
    || fail "takeover after ${elapsed} ms, before the lease could have expired (${min} ms)"
fi
leading_logged() { grep -q "^\[$other\] leading$" "$logs/$other.log"; }
wait_for "$other to log leading" 5 leading_logged && pass "$other's log says leading"
[[ "$(k -n "$ns" get lease "$lease" -o jsonpath='{.spec.leaseTransitions}')" == "1" ]] \
  && pass "leaseTransitions is 1" || fail "leaseTransitions is '$(k -n "$ns" get lease "$lease" -o jsonpath='{.spec.leaseTransitions}')'"

# 3. SIGTERM the new leader: it releases and exits 0.
kill -TERM "${pid[$other]}"
deadline=$(( $(now_ms) + 10000 ))
while kill -0 "${pid[$other]}" 2>/dev/null && (( $(now_ms) < deadline )); do sleep 0.1; done
if kill -0 "${pid[$other]}" 2>/dev/null; then
  fail "$other did not exit within 10 s of SIGTERM"
else
  status=0
  wait "${pid[$other]}" || status=$?
  unset "pid[$other]"
  (( status == 0 )) && pass "$other exited 0 on SIGTERM" || fail "$other exited with $status: $(tail -5 "$logs/$other.log")"
fi
released_holder=$(holder)
released_duration=$(k -n "$ns" get lease "$lease" -o jsonpath='{.spec.leaseDurationSeconds}')
[[ -z "$released_holder" ]] && pass "released: holderIdentity is empty" || fail "holderIdentity after SIGTERM is '$released_holder'"
[[ "$released_duration" == "1" ]] && pass "released: leaseDurationSeconds is 1" || fail "leaseDurationSeconds after release is '$released_duration'"
grep -q "^\[$other\] stopped leading$" "$logs/$other.log" && pass "$other ran on_stopped_leading" || fail "$other did not report stopped leading"

# 4. Events about the Lease, one per leadership.
events=$(k -n "$ns" get events --field-selector reason=LeaderElection -o jsonpath='{range .items[*]}{.involvedObject.name}:{.message}{"\n"}{end}')
expect_contains "event for $leader" "$events" "$lease:$leader became leader"
expect_contains "event for $other" "$events" "$lease:$other became leader"

finish
