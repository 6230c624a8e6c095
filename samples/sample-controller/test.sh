#!/usr/bin/env bash
# samples/sample-controller against the real cluster, driven and checked with
# kubectl (an independent client). The cluster's controllers turn the
# Deployment the sample makes into running pods on the fake nodes, and their
# status comes back into the Foo. Checks:
#   1. create Foo -> Deployment with spec.replicas, owned by the Foo (controller=true, uid)
#   2. the Foo carries the finalizer; status.observedGeneration follows the generation
#   3. change spec.replicas -> the Deployment follows
#   4. the Deployment reaches 3 available replicas; its status is mirrored into the Foo's
#   5. delete the Deployment -> it is recreated (new uid)
#   6. a Normal "Synced" event on the Foo
#   7. a Deployment of that name the Foo does not own -> Warning ErrResourceExists, left alone
#   8. delete Foo -> the finalizer deletes the Deployment, then the Foo is gone;
#      a Deployment the Foo did not own survives its Foo's deletion
#   9. /metrics (scraped with curl) agrees with what happened: 2 Deployment
#      creates = rest_client_requests_total{code="201",method="POST",
#      resource="deployments.apps"}; reconciles by result = the log's
#      reconcile lines; queue adds = reconciles once idle; informer and
#      reflector series for foos and deployments
#  10. SIGTERM -> clean exit
#  11. sharding options refused with the field named: a bad identity, --shard-labels alone
. "$(dirname "$0")/../../test/integration/lib.sh"
prog=${1:?usage: test.sh PATH_TO_sample-controller PATH_TO_crd.yaml}
crd=${2:?usage: test.sh PATH_TO_sample-controller PATH_TO_crd.yaml}
export KUBECONFIG=$KUBE_TEST_KUBECONFIG_ADMIN
k() { kubectl "$@"; }
ns=sample-ctrl-$RANDOM$RANDOM
log=$(mktemp)
pid=
cleanup() {
  [[ -n "$pid" ]] && kill -9 "$pid" 2>/dev/null
  k delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -f "$log"
}
trap cleanup EXIT

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# wait_for DESCRIPTION TIMEOUT_S COMMAND...: polls COMMAND every 0.2 s.
wait_for() {
  local what=$1 timeout=$2 deadline
  shift 2
  deadline=$(( $(now_ms) + timeout * 1000 ))
  until "$@"; do
    if (( $(now_ms) > deadline )); then fail "timed out after ${timeout}s waiting for: $what"; return 1; fi
    sleep 0.2
  done
  pass "$what"
}
get() { k -n "$ns" get "$1" -o "jsonpath=$2" 2>/dev/null || true; }
eq() { [[ "$(get "$1" "$2")" == "$3" ]]; }
exists() { k -n "$ns" get "$1" >/dev/null 2>&1; }
gone() { ! exists "$1"; }
has_event() {  # has_event OBJECT_NAME REASON TYPE
  [[ -n "$(k -n "$ns" get events --field-selector "involvedObject.kind=Foo,involvedObject.name=$1,reason=$2,type=$3" -o name 2>/dev/null)" ]]
}
grep_log() { grep -q -- "$1" "$log"; }

k apply -f "$crd" >/dev/null
k wait --for condition=established --timeout=60s crd/foos.samplecontroller.k8s.io >/dev/null
k create namespace "$ns" >/dev/null
"$prog" -n "$ns" --workers 2 --metrics-bind-address 127.0.0.1:0 >"$log" 2>&1 &
pid=$!
wait_for "controller reports synced caches" 30 grep_log "caches synced"
metrics_url=$(sed -n 's|.*serving metrics on \(http://[^ ]*\)$|\1|p' "$log" | head -1)
[[ -n "$metrics_url" ]] && pass "metrics served at $metrics_url" || fail "no 'serving metrics on' line in the log"

# 1. Foo -> Deployment with the replicas, owned by the Foo.
k -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: samplecontroller.k8s.io/v1alpha1
kind: Foo
metadata: {name: example-foo}
spec: {deploymentName: example-web, replicas: 1}
YAML
wait_for "Deployment example-web created" 30 exists deployment/example-web
foo_uid=$(get foo/example-foo '{.metadata.uid}')
owner=$(get deployment/example-web '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}/{.metadata.ownerReferences[0].controller}')
[[ "$owner" == "Foo/example-foo/$foo_uid/true" ]] && pass "Deployment owned by the Foo (controller=true, uid)" ||
  fail "ownerReference: got [$owner], want [Foo/example-foo/$foo_uid/true]"
r=$(get deployment/example-web '{.spec.replicas}')
[[ "$r" == 1 ]] && pass "Deployment has 1 replica" || fail "Deployment replicas: got [$r], want 1"

# 2. Finalizer and status.
wait_for "Foo carries the finalizer" 20 eq foo/example-foo '{.metadata.finalizers[*]}' samplecontroller.k8s.io/cleanup
wait_for "Foo status.observedGeneration = 1" 20 eq foo/example-foo '{.status.observedGeneration}' 1

# 3. Scale through the Foo.
k -n "$ns" patch foo example-foo --type=merge -p '{"spec":{"replicas":3}}' >/dev/null
wait_for "Deployment follows spec.replicas = 3" 20 eq deployment/example-web '{.spec.replicas}' 3
wait_for "Foo status.observedGeneration = 2" 20 eq foo/example-foo '{.status.observedGeneration}' 2

# 4. Status mirrored from the Deployment, which the cluster's controllers
#    bring to 3 running pods on the fake nodes.
wait_for "Deployment has 3 available replicas (controller manager, scheduler, KWOK)" 60 \
  eq deployment/example-web '{.status.availableReplicas}' 3
wait_for "Foo status mirrors the Deployment (replicas 3, available 3)" 20 \
  eq foo/example-foo '{.status.replicas}/{.status.availableReplicas}' 3/3

# 5. Deleted Deployment is recreated.
old_uid=$(get deployment/example-web '{.metadata.uid}')
k -n "$ns" delete deployment example-web --wait=false >/dev/null
recreated() { local u; u=$(get deployment/example-web '{.metadata.uid}'); [[ -n "$u" && "$u" != "$old_uid" ]]; }
wait_for "deleted Deployment is recreated (new uid)" 30 recreated
r=$(get deployment/example-web '{.spec.replicas}')
[[ "$r" == 3 ]] && pass "recreated Deployment has 3 replicas" || fail "recreated replicas: got [$r], want 3"

# 6. Events.
wait_for "Normal Synced event on the Foo" 20 has_event example-foo Synced Normal

# 7. A Deployment the Foo does not own.
k -n "$ns" create deployment taken --image=nginx:latest >/dev/null
k -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: samplecontroller.k8s.io/v1alpha1
kind: Foo
metadata: {name: greedy-foo}
spec: {deploymentName: taken, replicas: 2}
YAML
wait_for "Warning ErrResourceExists event on greedy-foo" 30 has_event greedy-foo ErrResourceExists Warning
refs=$(get deployment/taken '{.metadata.ownerReferences}')
r=$(get deployment/taken '{.spec.replicas}')
[[ -z "$refs" && "$r" == 1 ]] && pass "unowned Deployment left alone" || fail "unowned Deployment changed: refs [$refs] replicas [$r]"
grep_log "greedy-foo -> error" && pass "the refusal is logged as a reconcile error" || fail "no error logged for greedy-foo"

# 8. Deleting a Foo runs the finalizer.
k -n "$ns" delete foo example-foo --wait=false >/dev/null
wait_for "Foo example-foo is gone" 30 gone foo/example-foo
gone deployment/example-web && pass "its Deployment was deleted by the finalizer's cleanup" ||
  fail "Deployment example-web still exists after its Foo was deleted"
grep_log "deleted Deployment example-web" && pass "cleanup logged" || fail "no cleanup in the log"
k -n "$ns" delete foo greedy-foo --wait=false >/dev/null
wait_for "Foo greedy-foo is gone" 30 gone foo/greedy-foo
exists deployment/taken && pass "the Deployment greedy-foo did not own survives" || fail "Deployment taken was deleted"

# 9. Metrics, scraped as Prometheus would, against what happened above.
scraped=$(mktemp)
scrape() { curl -fsS --max-time 10 "$metrics_url" >"$scraped"; }
# value REGEX: the sample's value of the one series whose name{labels} matches REGEX.
value() { grep -E "^$1 " "$scraped" | awk '{print $2}'; }
sum_of() { grep -E "^$1 " "$scraped" | awk '{s += $2} END {print s + 0}'; }
scrape && pass "GET /metrics answers" || fail "GET $metrics_url failed"
ctype=$(curl -fsS -o /dev/null -w '%{content_type}' "$metrics_url")
[[ "$ctype" == "text/plain; version=0.0.4; charset=utf-8" ]] && pass "Prometheus text format 0.0.4" ||
  fail "content type [$ctype]"
code=$(curl -s -o /dev/null -w '%{http_code}' "${metrics_url%/metrics}/nothing-here")
[[ "$code" == 404 ]] && pass "other paths: 404" || fail "GET /nothing-here: HTTP $code"
creates=$(grep -c "created Deployment" "$log")
got=$(value 'rest_client_requests_total\{code="201",host="[^"]*",method="POST",resource="deployments\.apps"\}')
[[ "$creates" == 2 && "$got" == 2 ]] && pass "2 Deployment creates: rest_client_requests_total{code=201,method=POST,resource=deployments.apps} = 2" ||
  fail "Deployment creates: log $creates, metric [$got], want 2 and 2"
got=$(value 'rest_client_request_duration_seconds_count\{host="[^"]*",verb="POST"\}')
(( ${got:-0} >= 2 )) && pass "rest_client_request_duration_seconds counts the POSTs ($got)" ||
  fail "rest_client_request_duration_seconds_count{verb=POST}: [$got]"
got=$(value 'controller_runtime_max_concurrent_reconciles\{controller="sample-controller"\}')
[[ "$got" == 2 ]] && pass "controller_runtime_max_concurrent_reconciles = 2 (--workers 2)" ||
  fail "controller_runtime_max_concurrent_reconciles: [$got]"
# Once the controller is idle, every reconcile logged is counted by result,
# and every queue add has been handed to a reconcile (depth 0).
counts_agree() {
  scrape || return 1
  local logged errors total err adds depth
  logged=$(grep -c '^\[sample-controller\] worker [0-9]*: ' "$log")
  errors=$(grep -c '^\[sample-controller\] worker [0-9]*: .* -> error' "$log")
  total=$(sum_of 'controller_runtime_reconcile_total\{controller="sample-controller",result="[a-z_]*"\}')
  err=$(value 'controller_runtime_reconcile_total\{controller="sample-controller",result="error"\}')
  adds=$(value 'workqueue_adds_total\{name="sample-controller"\}')
  depth=$(value 'workqueue_depth\{name="sample-controller"\}')
  detail="log $logged reconciles ($errors errors); metrics: reconcile_total $total (error $err), workqueue adds $adds, depth $depth"
  [[ "$total" == "$logged" && "$err" == "$errors" && "$adds" == "$logged" && "$depth" == 0 && "$errors" -ge 1 ]]
}
detail=
if wait_for "reconciles by result and queue adds match the log once idle" 30 counts_agree; then echo "  ($detail)"; else echo "  ($detail)"; fi
for r in foos deployments; do
  got=$(value "reflector_lists_total\\{name=\"$r\"\\}")
  (( ${got:-0} >= 1 )) && pass "reflector_lists_total{name=$r} = $got" || fail "reflector_lists_total{name=$r}: [$got]"
  grep -qE "^informer_queued_items\\{group=\"[a-z0-9.-]*\",name=\"$r\",resource=\"$r\",version=\"v[0-9a-z]*\"\\} 0\$" "$scraped" &&
    pass "informer_queued_items{resource=$r} = 0" ||
    fail "no informer_queued_items{resource=$r} 0 in: $(grep '^informer_queued_items' "$scraped" | tr '\n' ' ')"
  got=$(value "reflector_last_resource_version\\{name=\"$r\"\\}")
  [[ "$got" =~ ^[0-9.e+]+$ ]] && pass "reflector_last_resource_version{name=$r} = $got" ||
    fail "reflector_last_resource_version{name=$r}: [$got]"
done
rm -f "$scraped"

# 10. Clean exit on SIGTERM.
kill -TERM "$pid"
if wait "$pid"; then pass "SIGTERM: exit 0"; else fail "exit status $? after SIGTERM"; fi
pid=
grep_log "stopped after" && pass "stop logged" || fail "no stop line"

# 11. Bad sharding options: a clear error naming what is wrong, exit != 0.
bad=$("$prog" -n "$ns" --metrics-bind-address 0 --shard "Bad Id" 2>&1) && fail "--shard 'Bad Id' accepted" ||
  { [[ $bad == *'identity "Bad Id" must be'* ]] && pass "--shard 'Bad Id' refused: $bad" || fail "--shard 'Bad Id': $bad"; }
bad=$("$prog" -n "$ns" --shard-labels 2>&1) && fail "--shard-labels without --shard accepted" ||
  { [[ $bad == *"--shard-labels needs --shard IDENTITY"* ]] && pass "--shard-labels alone refused" || fail "--shard-labels alone: $bad"; }
echo "---- controller log (last 25 lines) ----"
tail -n 25 "$log"
finish
