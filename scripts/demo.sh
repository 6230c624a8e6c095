#!/usr/bin/env bash
# The main job: builds the SDK and its samples, brings up a local REAL
# Kubernetes control plane (kube-apiserver + etcd built from Go modules) and
# runs a sample against it, then tears everything down.
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
echo "== starting kube-apiserver + etcd"
# --watch-pid: if this script is killed, the cluster goes away with it.
"$kcluster" up --dir "$state" --watch-pid $$ >/dev/null
set -a; . "$state/cluster.env"; set +a
echo "   apiserver at $KUBE_TEST_SERVER; kubeconfig: $KUBE_TEST_KUBECONFIG_ADMIN"

echo "== kube-server-version: GET /version over verified TLS with a client certificate"
"$build/samples/server-version/kube-server-version" --server "$KUBE_TEST_SERVER" \
  --ca "$KUBE_TEST_CA" --cert "$KUBE_TEST_ADMIN_CERT" --key "$KUBE_TEST_ADMIN_KEY"
echo "== done; stopping the cluster"
