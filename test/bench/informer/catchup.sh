#!/usr/bin/env bash
# Catch-up after an apiserver outage: how long an informer with default
# settings takes to show a change made just after the apiserver is back.
#
#   test/bench/informer/catchup.sh [-B BUILD_DIR] [-o "5 30 90"]
#
# Uses a configured build (default build/asan) for its test-cluster binaries
# and the asio-embedding sample (an informer factory with default backoff
# and watch settings, whose HTTP routes answer from the cache). For each
# outage length T: SIGKILL the apiserver (kcluster kill-apiserver), wait T
# seconds, start it again (kcluster start-apiserver returns once it is
# ready), create a ConfigMap with kubectl, and poll the sample's
# /configmaps every 100 ms until the ConfigMap is there. Before each outage
# the informer's watch runs for 5 s (a watch younger than a second that ends
# without an event relists, client-go's "very short watch" rule). Prints T,
# the catch-up time, and how many failed attempts the informer's watch
# error hook reported during the outage, and how many of them relisted.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=$root/build/asan
outages="5 30 90"
while getopts "B:o:" opt; do
  case $opt in
  B) build=$OPTARG ;;
  o) outages=$OPTARG ;;
  *) echo "usage: $0 [-B BUILD_DIR] [-o \"SECONDS ...\"]" >&2; exit 2 ;;
  esac
done
bin=$build/test-cluster/bin
sample=$build/samples/asio-embedding/asio-embedding
[[ -x $bin/kcluster && -x $sample ]] || { echo "catchup.sh: build kube_test_cluster and asio-embedding in $build first" >&2; exit 2; }

state=$(mktemp -d)
sample_pid=""
cleanup() {
  [[ -n $sample_pid ]] && kill "$sample_pid" 2>/dev/null || true
  [[ -f $state/sample.log ]] && cp "$state/sample.log" "$build/catchup-sample.log"
  "$bin/kcluster" down --dir "$state" >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT
"$bin/kcluster" up --dir "$state" --bin-dir "$bin" --watch-pid $$ >/dev/null
kc=$state/kubeconfig/admin-cert.yaml
kctl() { kubectl --kubeconfig "$kc" "$@"; }
kctl create namespace catchup >/dev/null

"$sample" --kubeconfig "$kc" --namespace catchup >"$state/sample.log" 2>&1 &
sample_pid=$!
port=""
for _ in $(seq 1 100); do
  port=$(sed -n 's|^listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$state/sample.log")
  [[ -n $port ]] && curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
  sleep 0.2
done
[[ -n $port ]] || { echo "catchup.sh: the sample did not start:" >&2; cat "$state/sample.log" >&2; exit 1; }

printf '%-12s %-14s %-16s %s\n' "outage (s)" "catch-up (s)" "failed attempts" "of which relists"
for t in $outages; do
  sleep 5
  before=$(grep -c 'watch error' "$state/sample.log" || true)
  before_relists=$(grep -c 'with a relist' "$state/sample.log" || true)
  "$bin/kcluster" kill-apiserver --dir "$state" >/dev/null
  sleep "$t"
  "$bin/kcluster" start-apiserver --dir "$state" >/dev/null
  start=$(date +%s%N)
  kctl -n catchup create configmap "after-$t" --from-literal=v=1 >/dev/null
  until curl -sf "http://127.0.0.1:$port/configmaps?namespace=catchup" | grep -q "\"after-$t\""; do
    sleep 0.1
  done
  end=$(date +%s%N)
  ms=$(((end - start) / 1000000))
  after=$(grep -c 'watch error' "$state/sample.log" || true)
  after_relists=$(grep -c 'with a relist' "$state/sample.log" || true)
  printf '%-12s %-14s %-16s %s\n' "$t" "$((ms / 1000)).$(((ms % 1000) / 100))" "$((after - before))" \
    "$((after_relists - before_relists))"
done
