#!/usr/bin/env bash
# The main job: builds the SDK and its samples, brings up a local REAL
# Kubernetes cluster (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and KWOK's fake nodes, built from Go modules) and runs the
# samples against it, then tears everything down.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KUBE_BUILD_DIR:-$root/build}/demo
export GOTOOLCHAIN=local

"$root/scripts/install-deps.sh"
echo "== building the SDK and samples (Release)"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKUBE_BUILD_TESTS=OFF -DKUBE_BUILD_SAMPLES=ON >/dev/null
cmake --build "$build"
echo "== building the local cluster (cached after the first run)"
"$root/test/cluster/build.sh" "$build/cluster-bin"

kcluster=$build/cluster-bin/kcluster
state=$build/cluster
trap '"$kcluster" down --dir "$state" >/dev/null 2>&1 || true' EXIT INT TERM
echo "== starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler and 3 fake nodes (KWOK)"
# --watch-pid: if this script is killed, the cluster goes away with it.
"$kcluster" up --dir "$state" --watch-pid $$ >/dev/null
set -a; . "$state/cluster.env"; set +a
PATH="$build/cluster-bin:$PATH"  # kubectl built with the apiserver, same version
echo "   apiserver at $KUBE_TEST_SERVER; kubeconfig: $KUBE_TEST_KUBECONFIG_ADMIN"
kubectl --kubeconfig "$KUBE_TEST_KUBECONFIG_ADMIN" get nodes | sed 's/^/   /'

echo "== kube-server-version: GET /version over verified TLS with a client certificate"
"$build/samples/server-version/kube-server-version" --server "$KUBE_TEST_SERVER" \
  --ca "$KUBE_TEST_CA" --cert "$KUBE_TEST_ADMIN_CERT" --key "$KUBE_TEST_ADMIN_KEY"
echo "== kube-get: discovery + RESTMapper + dynamic client, like 'kubectl get'"
export KUBECONFIG=$KUBE_TEST_KUBECONFIG_ADMIN KUBECACHEDIR=$build/kube-cache
kubectl create namespace demo >/dev/null
for i in 1 2 3; do kubectl -n demo create configmap "settings-$i" --from-literal=level=$i >/dev/null; done
"$build/samples/kube-get/kube-get" namespaces
"$build/samples/kube-get/kube-get" cm -n demo
echo "== kube-get -w: watching configmaps in 'demo' while kubectl changes them"
"$build/samples/kube-get/kube-get" configmaps -n demo -w --timeout 5 &
watcher=$!
sleep 1
kubectl -n demo create configmap added-later --from-literal=level=9 >/dev/null
kubectl -n demo patch configmap settings-1 -p '{"data":{"level":"10"}}' >/dev/null
kubectl -n demo delete configmap settings-2 >/dev/null
wait $watcher

echo "== sample-controller: informers + workqueue + reconcile, Foo (a CRD) -> a Deployment it owns"
kubectl apply -f "$root/samples/sample-controller/crd.yaml" >/dev/null
kubectl wait --for condition=established --timeout=60s crd/foos.samplecontroller.k8s.io >/dev/null
# (its per-key "worker N: ... -> done" lines left out; the reconciles stay)
# Its /metrics on a free port (the port is in its first lines).
ctrl_log=$(mktemp)
"$build/samples/sample-controller/sample-controller" -n demo --metrics-bind-address 127.0.0.1:0 \
  > >(tee "$ctrl_log" | sed -u -e '/ worker [0-9]*: .* -> done /d' -e 's/^/   [controller] /') 2>&1 &
controller=$!
step() { echo "-- $*"; sleep 2; }
kubectl -n demo apply -f - >/dev/null <<'YAML'
apiVersion: samplecontroller.k8s.io/v1alpha1
kind: Foo
metadata: {name: example-foo}
spec: {deploymentName: example-foo, replicas: 1}
YAML
step "created Foo example-foo (replicas 1)"
kubectl -n demo get deployment example-foo -o custom-columns=DEPLOYMENT:.metadata.name,REPLICAS:.spec.replicas,OWNER:.metadata.ownerReferences[0].kind
kubectl -n demo patch foo example-foo --type merge -p '{"spec":{"replicas":3}}' >/dev/null
step "scaled Foo example-foo to 3"
kubectl -n demo rollout status deployment/example-foo --timeout=60s >/dev/null
kubectl -n demo get deployment example-foo -o custom-columns=DEPLOYMENT:.metadata.name,REPLICAS:.spec.replicas,READY:.status.readyReplicas
echo "-- its pods, made by the ReplicaSet controller, scheduled, and Running on the fake nodes"
kubectl -n demo get pods -o custom-columns=POD:.metadata.name,PHASE:.status.phase,IP:.status.podIP,NODE:.spec.nodeName

echo "== servicelookup: which Services does each pod serve? Informers over the EndpointSlices the controller writes"
kubectl -n demo expose deployment example-foo --name web --port 80 --target-port 8080 >/dev/null
"$build/samples/servicelookup/servicelookup" -n demo > >(sed -u 's/^/   [servicelookup] /') 2>&1 &
lookup=$!
step "exposed the Deployment as Service web: the endpointslice controller lists its 3 pods"
kubectl -n demo patch foo example-foo --type merge -p '{"spec":{"replicas":1}}' >/dev/null
step "scaled Foo example-foo to 1: two pods go"
kubectl -n demo patch foo example-foo --type merge -p '{"spec":{"replicas":2}}' >/dev/null
kubectl -n demo rollout status deployment/example-foo --timeout=60s >/dev/null
step "scaled Foo example-foo to 2: a new pod comes and serves web"
kill -TERM $lookup
wait $lookup

pod=$(kubectl -n demo get pods -l controller=example-foo --field-selector=status.phase=Running \
  -o jsonpath='{.items[0].metadata.name}')
echo "== kube-logs: 'kubectl logs --timestamps' of $pod (KWOK serves a log file)"
"$build/samples/kube-logs/kube-logs" -n demo --timestamps "$pod" | sed 's/^/   /'
echo "== kube-exec: 'kubectl exec' in $pod (KWOK runs the command on this machine)"
"$build/samples/kube-exec/kube-exec" -n demo "$pod" -- sh -c 'echo "hello from $0"' "$pod" | sed 's/^/   /'

kubectl -n demo delete deployment example-foo >/dev/null
step "deleted the Deployment behind the controller's back"
kubectl -n demo get deployment example-foo -o custom-columns=DEPLOYMENT:.metadata.name,REPLICAS:.spec.replicas,CREATED:.metadata.creationTimestamp
kubectl -n demo get events --field-selector involvedObject.kind=Foo -o custom-columns=TYPE:.type,REASON:.reason,MESSAGE:.message
kubectl -n demo delete foo example-foo --wait=true --timeout=30s >/dev/null
step "deleted Foo example-foo: its finalizer removed the Deployment"
kubectl -n demo get deployments 2>&1 | sed 's/^/   /'
metrics_url=$(sed -n 's|.*serving metrics on \(http://[^ ]*\)$|\1|p' "$ctrl_log" | head -1)
echo "== the controller's Prometheus metrics ($metrics_url): its writes, its reconciles, its queue"
curl -fsS "$metrics_url" | grep -E '^(rest_client_requests_total\{code="20[01]",[^}]*method="(POST|PUT|PATCH)"|controller_runtime_reconcile_total|workqueue_adds_total|reflector_lists_total)' |
  sed 's/^/   /'
rm -f "$ctrl_log"
kill -TERM $controller
wait $controller && echo "-- the controller stopped cleanly (SIGTERM)"
echo "== sample-controller, sharded: 3 replicas share the Foos (a Lease each as membership, a consistent-hash ring;"
echo "   label mode: each Foo and its Deployment carry their replica's label, and each replica caches only its own)"
kubectl create namespace shards >/dev/null
declare -A replica_pid replica_log
for r in replica-1 replica-2 replica-3; do
  replica_log[$r]=$(mktemp)
  "$build/samples/sample-controller/sample-controller" -n shards --metrics-bind-address 0 \
    --shard "$r" --shard-lease-seconds 4 --shard-labels >"${replica_log[$r]}" 2>&1 &
  replica_pid[$r]=$!
done
for i in $(seq 1 9); do
  printf 'apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata: {name: foo-%s}\nspec: {deploymentName: foo-%s, replicas: 0}\n---\n' "$i" "$i"
done | kubectl -n shards apply -f - >/dev/null
for _ in $(seq 1 60); do
  [[ $(kubectl -n shards get deployments -o name | wc -l) -ge 9 ]] && break
  sleep 0.5
done
# who: which replica's log says it did $1 to each Foo ("created Deployment", "scaled Deployment")
who() {
  for r in "${!replica_log[@]}"; do
    sed -n "s|.* reconcile shards/\(foo-[0-9]*\): $1.*|   \1 by $r|p" "${replica_log[$r]}"
  done | sort -V
}
echo "-- 9 Foos created; each Deployment was created by one replica:"
who "created Deployment"
kubectl -n shards get foos -L shard.kube-cpp.dev/sample-controller | sed 's/^/   /'
echo "-- the membership Leases (kubectl):"
kubectl -n shards get leases -l sharding.kube-cpp.dev/ring=sample-controller \
  -o custom-columns=LEASE:.metadata.name,HOLDER:.spec.holderIdentity,ACKNOWLEDGED-VIEW:.metadata.annotations.sharding\\.kube-cpp\\.dev/view |
  sed 's/^/   /'
kill -KILL "${replica_pid[replica-2]}"
wait "${replica_pid[replica-2]}" 2>/dev/null || true
echo "-- killed replica-2 (SIGKILL): its Lease stops changing; after 4 s replica-1 or replica-3 empties it"
sleep 7
kubectl -n shards get leases -l sharding.kube-cpp.dev/ring=sample-controller \
  -o custom-columns=LEASE:.metadata.name,HOLDER:.spec.holderIdentity,ACKNOWLEDGED-VIEW:.metadata.annotations.sharding\\.kube-cpp\\.dev/view |
  sed 's/^/   /'
for i in $(seq 1 9); do kubectl -n shards patch foo "foo-$i" --type merge -p '{"spec":{"replicas":1}}' >/dev/null; done
sleep 3
echo "-- scaled every Foo to 1: the two live replicas now reconcile all of them"
who "scaled Deployment"
kubectl -n shards get deployments -L shard.kube-cpp.dev/sample-controller | sed 's/^/   /'
for r in replica-1 replica-3; do kill -TERM "${replica_pid[$r]}"; done
for r in replica-1 replica-3; do wait "${replica_pid[$r]}" && echo "-- $r stopped cleanly (SIGTERM) and released its Lease"; done
rm -f "${replica_log[@]}"
echo "== done; stopping the cluster"
