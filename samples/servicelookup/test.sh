#!/usr/bin/env bash
# servicelookup against the real cluster (controller-manager, scheduler, KWOK
# nodes). Two sources of EndpointSlices, each change waited for as the right
# answer in the sample's output (polled with a timeout, never a fixed sleep).
# First, slices written by hand (kubectl) for Services without a selector,
# which no controller touches:
#   1. initial answers: web-1 and web-2 serve demo/web;
#   2. a new Service (web-internal) with a slice pointing at web-1;
#   3. web-2 removed from web's slice;
#   4. a pod created later (web-3), then added to web's slice;
#   5. web-internal deleted (its slice stays: it has no owner to collect it);
#   6. web-1 marked not ready in web's slice;
#   7. web-2 deleted;
# and a second instance started with --pod prints web-1's answers only, the
# same sequence. Then the real thing:
#   8. a Deployment (api, 2 replicas) and a Service selecting its pods: the
#      endpointslice controller writes the slices; scaled to 3, the new pod
#      serves api; scaled to 1, the removed pods are gone and the last one
#      still serves api.
# Finally SIGTERM: both exit 0.
. "$(dirname "$0")/../../test/integration/lib.sh"
prog=${1:?usage: test.sh PATH_TO_servicelookup}
export KUBECONFIG=$KUBE_TEST_KUBECONFIG_ADMIN
k() { kubectl "$@"; }
ns=svclookup-$RANDOM$RANDOM
out=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  k delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$out"
}
trap cleanup EXIT

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# expect_line FILE LINE [N]: waits up to 20 s until LINE (a whole line) is in
# FILE N times (default 1).
expect_line() {
  local deadline=$(( $(now_ms) + 20000 )) n=${3:-1}
  until (( $(grep -Fxc -- "$2" "$1") >= n )); do
    if (( $(now_ms) > deadline )); then
      fail "timed out waiting for '$2' in $(basename "$1"); it has:"$'\n'"$(cat "$1")"
      finish  # the next steps build on this one
    fi
    sleep 0.1
  done
  pass "$2"
}
pod() {
  k -n "$ns" run "$1" --image=registry.invalid/none:1 --restart=Never --labels=app=web >/dev/null
}
# A Service without a selector: its slices are the ones this script writes.
service() {
  k -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Service
metadata: {name: $1}
spec: {ports: [{port: 80, targetPort: 8080}]}
YAML
}
# slice NAME SERVICE [POD[:notready]]...: creates or replaces an EndpointSlice
# of SERVICE whose endpoints point at the PODs, as the controller would.
slice() {
  local name=$1 svc=$2 eps="" i=1
  shift 2
  for p in "$@"; do
    local ready=true
    [[ $p == *:notready ]] && { ready=false; p=${p%:notready}; }
    eps+="
- addresses: [\"10.1.0.$i\"]
  conditions: {ready: $ready}
  targetRef: {kind: Pod, namespace: $ns, name: $p}"
    i=$((i + 1))
  done
  [[ -z $eps ]] && eps=" []"
  k -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: $name
  labels: {kubernetes.io/service-name: $svc}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:$eps
YAML
}

k create namespace "$ns" >/dev/null
pod web-1
pod web-2
service web
slice web-a1 web web-1 web-2

"$prog" --namespace "$ns" >"$out/all.log" 2>"$out/all.err" &
pids+=($!)
"$prog" --namespace "$ns" --pod web-1 >"$out/one.log" 2>"$out/one.err" &
pids+=($!)

# 1. Initial answers.
expect_line "$out/all.log" "pod $ns/web-1 serves: $ns/web"
expect_line "$out/all.log" "pod $ns/web-2 serves: $ns/web"
# 2. A second Service for web-1.
service web-internal
slice web-internal-b2 web-internal web-1
expect_line "$out/all.log" "pod $ns/web-1 serves: $ns/web, $ns/web-internal"
# 3. web-2 leaves web's endpoints.
slice web-a1 web web-1
expect_line "$out/all.log" "pod $ns/web-2 serves: (none)"
# 4. A pod that appears while the sample runs, then gets traffic.
pod web-3
expect_line "$out/all.log" "pod $ns/web-3 serves: (none)"
slice web-a1 web web-1 web-3
expect_line "$out/all.log" "pod $ns/web-3 serves: $ns/web"
# 5. web-internal deleted: its slice (no owner) is left behind, but it no longer counts.
k -n "$ns" delete service web-internal >/dev/null
expect_line "$out/all.log" "pod $ns/web-1 serves: $ns/web" 2
# 6. web-1 not ready: no traffic, so it serves nothing.
slice web-a1 web web-1:notready web-3
expect_line "$out/all.log" "pod $ns/web-1 serves: (none)"
# 7. A deleted pod.
k -n "$ns" delete pod web-2 --wait=false >/dev/null
expect_line "$out/all.log" "pod $ns/web-2 is gone"

# 8. A Deployment's pods behind a Service with a selector: EndpointSlices by
# the endpointslice controller, as pods come and go.
# api's pods that are Running and not being deleted, by name.
api_pods() {
  k -n "$ns" get pods -l app=api \
    -o jsonpath='{range .items[*]}{.metadata.name} {.status.phase} {.metadata.deletionTimestamp}{"\n"}{end}' |
    awk '$2 == "Running" && $3 == "" {print $1}' | sort
}
wait_api_pods() {  # wait_api_pods N: until api has N of them
  local deadline=$(( $(now_ms) + 60000 ))
  until [[ $(api_pods | wc -l) == "$1" ]]; do
    (( $(now_ms) > deadline )) && { fail "api did not get $1 running pods: $(api_pods)"; finish; }
    sleep 0.2
  done
}
k -n "$ns" create deployment api --image=registry.invalid/none:1 --replicas=2 >/dev/null
k -n "$ns" expose deployment api --port=80 --target-port=8080 >/dev/null
wait_api_pods 2
mapfile -t two < <(api_pods)
for p in "${two[@]}"; do expect_line "$out/all.log" "pod $ns/$p serves: $ns/api"; done
managed=$(k -n "$ns" get endpointslices -l kubernetes.io/service-name=api \
  -o jsonpath='{.items[*].metadata.labels.endpointslice\.kubernetes\.io/managed-by}')
[[ $managed == endpointslice-controller.k8s.io ]] && pass "api's slice is the endpointslice controller's" ||
  fail "api's slices are managed by [$managed]"
k -n "$ns" scale deployment api --replicas=3 >/dev/null
wait_api_pods 3
mapfile -t three < <(api_pods)
for p in "${three[@]}"; do expect_line "$out/all.log" "pod $ns/$p serves: $ns/api"; done
k -n "$ns" scale deployment api --replicas=1 >/dev/null
wait_api_pods 1
mapfile -t one < <(api_pods)
for p in "${three[@]}"; do
  [[ $p == "${one[0]}" ]] || expect_line "$out/all.log" "pod $ns/$p is gone"
done
last=$(grep "^pod $ns/${one[0]} " "$out/all.log" | tail -1)
[[ $last == "pod $ns/${one[0]} serves: $ns/api" ]] && pass "the pod left still serves api" ||
  fail "the pod left (${one[0]}): its last answer is [$last]"

# The whole history, in order: every change printed once, nothing else.
want_web1="pod $ns/web-1 serves: $ns/web
pod $ns/web-1 serves: $ns/web, $ns/web-internal
pod $ns/web-1 serves: $ns/web
pod $ns/web-1 serves: (none)"
got_web1=$(grep "^pod $ns/web-1 " "$out/all.log" || true)
[[ "$got_web1" == "$want_web1" ]] && pass "web-1's answers, in order, once each" \
  || fail "web-1's answers: got"$'\n'"$got_web1"$'\n'"want"$'\n'"$want_web1"
want_web2="pod $ns/web-2 serves: $ns/web
pod $ns/web-2 serves: (none)
pod $ns/web-2 is gone"
got_web2=$(grep "^pod $ns/web-2 " "$out/all.log" || true)
[[ "$got_web2" == "$want_web2" ]] && pass "web-2's answers, in order, once each" \
  || fail "web-2's answers: got"$'\n'"$got_web2"$'\n'"want"$'\n'"$want_web2"

# --pod web-1: the same history for web-1, and no other pod.
expect_line "$out/one.log" "pod $ns/web-1 serves: (none)"
got_one=$(grep "^pod " "$out/one.log" || true)
[[ "$got_one" == "$want_web1" ]] && pass "--pod web-1 prints web-1's answers only" \
  || fail "--pod web-1 printed"$'\n'"$got_one"$'\n'"want"$'\n'"$want_web1"

# SIGTERM: both stop cleanly.
for p in "${pids[@]}"; do kill -TERM "$p"; done
for p in "${pids[@]}"; do
  deadline=$(( $(now_ms) + 10000 ))
  while kill -0 "$p" 2>/dev/null && (( $(now_ms) < deadline )); do sleep 0.1; done
  status=0
  if kill -0 "$p" 2>/dev/null; then fail "servicelookup ($p) still running 10 s after SIGTERM"; continue; fi
  wait "$p" || status=$?
  (( status == 0 )) && pass "servicelookup exited 0 on SIGTERM" || fail "servicelookup exited with $status"
done
pids=()
if [[ -s "$out/all.err" || -s "$out/one.err" ]]; then
  fail "stderr is not empty: $(cat "$out/all.err" "$out/one.err")"
fi
finish
