#!/usr/bin/env bash
# The test cluster behaves like a real one, checked with kubectl (built from
# the apiserver's module) as the independent client: the fake nodes are
# Ready, a Deployment of 3 replicas reaches 3 ready pods with IPs on them, a
# Service gets an EndpointSlice from the endpointslice controller with those
# IPs, and a deleted pod is replaced by its ReplicaSet.
. "$(dirname "$0")/lib.sh"
k() { kubectl --kubeconfig "$KUBE_TEST_KUBECONFIG_ADMIN" "$@"; }
ns=cluster-workloads
k delete namespace "$ns" --ignore-not-found --wait=true >/dev/null
k create namespace "$ns" >/dev/null
trap 'k delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT

version=$(k version -o json | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | sort -u | tr '\n' ' ')
expect_contains "kubectl and the server are one version" "$version" "v1.34.4 "
[[ $(wc -w <<<"$version") == 1 ]] && pass "one gitVersion on both sides" || fail "client and server differ: $version"

nodes=$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status} {end}')
[[ $(grep -o '=True' <<<"$nodes" | wc -l) == "$KUBE_TEST_NODES" ]] &&
  pass "$KUBE_TEST_NODES nodes Ready: $nodes" || fail "expected $KUBE_TEST_NODES Ready nodes: $nodes"

k -n "$ns" apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: example.invalid/web:1, ports: [{containerPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
YAML

if k -n "$ns" rollout status deployment/web --timeout=120s >/dev/null; then
  pass "deployment web rolled out"
else
  fail "deployment web did not roll out: $(k -n "$ns" get deploy,rs,pods -o wide 2>&1)"
fi
ready=$(k -n "$ns" get deployment web -o jsonpath='{.status.readyReplicas}')
[[ $ready == 3 ]] && pass "3 ready replicas" || fail "readyReplicas=$ready, expected 3"

# pod_ips: "name=ip" of each Running pod of the Deployment, sorted.
pod_ips() {
  k -n "$ns" get pods -l app=web --field-selector=status.phase=Running \
    -o jsonpath='{range .items[*]}{.metadata.name}={.status.podIP}{"\n"}{end}' | sort
}
pods=$(pod_ips)
[[ $(grep -c '=10\.244\.' <<<"$pods") == 3 ]] && pass "3 Running pods with IPs: $(tr '\n' ' ' <<<"$pods")" ||
  fail "expected 3 Running pods with an IP in 10.244.0.0/16: $pods"
spread=$(k -n "$ns" get pods -l app=web -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c kwok-node-)
[[ $spread == 3 ]] && pass "the scheduler bound all 3 pods to fake nodes" || fail "only $spread pods bound to a node"

# The EndpointSlice of the Service holds exactly the pods' IPs.
want_ips=$(sed 's/.*=//' <<<"$pods" | sort | tr '\n' ' ')
slice_ips=""
for _ in $(seq 1 100); do
  slice_ips=$(k -n "$ns" get endpointslices -l kubernetes.io/service-name=web \
    -o jsonpath='{range .items[*].endpoints[*]}{.addresses[0]}{"\n"}{end}' | sort | tr '\n' ' ')
  [[ $slice_ips == "$want_ips" ]] && break
  sleep 0.2
done
[[ $slice_ips == "$want_ips" ]] && pass "EndpointSlice of service web lists the 3 pod IPs" ||
  fail "EndpointSlice addresses '$slice_ips', expected '$want_ips'"
owner=$(k -n "$ns" get endpointslices -l kubernetes.io/service-name=web \
  -o jsonpath='{.items[0].metadata.labels.endpointslice\.kubernetes\.io/managed-by}')
[[ $owner == endpointslice-controller.k8s.io ]] && pass "made by the endpointslice controller" ||
  fail "EndpointSlice managed-by '$owner'"

# Delete one pod: the ReplicaSet makes a new one, which becomes Running.
victim=$(head -1 <<<"$pods" | cut -d= -f1)
k -n "$ns" delete pod "$victim" --wait=true --timeout=60s >/dev/null
after=""
for _ in $(seq 1 150); do
  after=$(pod_ips)
  [[ $(grep -c '=10\.244\.' <<<"$after") == 3 && $after != *"$victim="* ]] && break
  sleep 0.2
done
if [[ $(grep -c '=10\.244\.' <<<"$after") == 3 && $after != *"$victim="* ]]; then
  pass "deleted pod $victim was replaced: $(tr '\n' ' ' <<<"$after")"
else
  fail "after deleting $victim: $after"
fi
finish
