#!/usr/bin/env bash
# Catch-up after an apiserver outage: how long an informer with default
# settings takes to show a change made just after the apiserver is back,
# kube's and client-go's side by side through the same outages.
#
#   test/bench/informer/catchup.sh [-B BUILD_DIR] [-o "5 30 90"]
#
# Uses a configured build (default build/clang-asan) for its test-cluster binaries
# and the asio-embedding sample (an informer factory with default backoff
# and watch settings, whose HTTP routes answer from the cache); builds the
# client-go peer (test/bench/go/cmd/catchup: the same informer and route
# with client-go v0.34's defaults). For each outage length T: SIGKILL the
# apiserver (kcluster kill-apiserver), wait T seconds, start it again
# (kcluster start-apiserver returns once it is ready), create a ConfigMap
# with kubectl, and poll both caches every 100 ms until each has the
# ConfigMap. Before each outage the watches run for 5 s (a watch younger
# than a second that ends without an event relists, client-go's "very
# short watch" rule). Prints T, each client's catch-up time, and how many
# failed attempts each one's watch error hook heard during the outage
# (kube's hook also says how many of them relisted).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=$root/build/clang-asan
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
peer=$build/go-bench/catchup
(cd "$root/test/bench/go" && GOTOOLCHAIN=local go build -o "$peer" ./cmd/catchup)

state=$(mktemp -d)
sample_pid=""
peer_pid=""
cleanup() {
  [[ -n $sample_pid ]] && kill "$sample_pid" 2>/dev/null || true
  [[ -n $peer_pid ]] && kill "$peer_pid" 2>/dev/null || true
  [[ -f $state/sample.log ]] && cp "$state/sample.log" "$build/catchup-sample.log"
  [[ -f $state/peer.log ]] && cp "$state/peer.log" "$build/catchup-client-go.log"
  "$bin/kcluster" down --dir "$state" >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT
"$bin/kcluster" up --dir "$state" --bin-dir "$bin" --watch-pid $$ --apiserver-only >/dev/null
kc=$state/kubeconfig/admin-cert.yaml
kctl() { "$bin/kubectl" --kubeconfig "$kc" "$@"; }
kctl create namespace catchup >/dev/null

# listening PROGRAM_LOG: waits for "listening on http://127.0.0.1:PORT" and prints PORT.
listening() {
  local port=""
  for _ in $(seq 1 150); do
    port=$(sed -n 's|^listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$1")
    [[ -n $port ]] && break
    sleep 0.2
  done
  [[ -n $port ]] || { echo "catchup.sh: $1 did not start:" >&2; cat "$1" >&2; exit 1; }
  echo "$port"
}
"$sample" --kubeconfig "$kc" --namespace catchup >"$state/sample.log" 2>&1 &
sample_pid=$!
"$peer" -kubeconfig "$kc" -namespace catchup >"$state/peer.log" 2>&1 &
peer_pid=$!
port=$(listening "$state/sample.log")
peer_port=$(listening "$state/peer.log")
[[ -n $port && -n $peer_port ]] || exit 1
count() { grep -c "$1" "$2" || true; }

printf '%-11s %-15s %-20s %-19s %s\n' "outage (s)" "kube catch-up" "kube failed/relists" "client-go catch-up" "client-go failed"
for t in $outages; do
  sleep 5
  before=$(count 'watch error' "$state/sample.log")
  before_relists=$(count 'with a relist' "$state/sample.log")
  peer_before=$(count 'watch error' "$state/peer.log")
  "$bin/kcluster" kill-apiserver --dir "$state" >/dev/null
  sleep "$t"
  "$bin/kcluster" start-apiserver --dir "$state" >/dev/null
  start=$(date +%s%N)
  kctl -n catchup create configmap "after-$t" --from-literal=v=1 >/dev/null
  kube_end="" peer_end=""
  until [[ -n $kube_end && -n $peer_end ]]; do
    if [[ -z $kube_end ]] && curl -sf "http://127.0.0.1:$port/configmaps?namespace=catchup" | grep -q "\"after-$t\""; then
      kube_end=$(date +%s%N)
    fi
    if [[ -z $peer_end ]] && curl -sf "http://127.0.0.1:$peer_port/configmaps" | grep -qx "after-$t"; then
      peer_end=$(date +%s%N)
    fi
    sleep 0.1
  done
  secs() { local ms=$((($1 - start) / 1000000)); echo "$((ms / 1000)).$(((ms % 1000) / 100))"; }
  printf '%-11s %-15s %-20s %-19s %s\n' "$t" "$(secs "$kube_end")" \
    "$(($(count 'watch error' "$state/sample.log") - before))/$(($(count 'with a relist' "$state/sample.log") - before_relists))" \
    "$(secs "$peer_end")" "$(($(count 'watch error' "$state/peer.log") - peer_before))"
done
