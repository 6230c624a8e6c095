#!/usr/bin/env bash
# The longer chaos run: integration.chaos with more rounds (default 30; CI
# runs 3 through ctest), on a cluster of its own.
#
#   test/integration/fault/soak.sh [-B BUILD_DIR] [-r ROUNDS]
#
# Uses a configured and built tree (default build/clang-asan): its test-cluster
# binaries and the integration.chaos program. Starts a cluster in a
# temporary directory (kcluster up), runs every round of churn, SIGKILLed
# apiserver, cut-off informer and etcd compaction, with the test's checks
# after each round, and prints the wall time and the test's summary line:
# operations, 410s, lists (each must be one 410's relist or a watch the kill
# ended in its first second), as in docs/reliability.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=$root/build/clang-asan
rounds=30
while getopts "B:r:" opt; do
  case $opt in
  B) build=$OPTARG ;;
  r) rounds=$OPTARG ;;
  *) echo "usage: $0 [-B BUILD_DIR] [-r ROUNDS]" >&2; exit 2 ;;
  esac
done
bin=$build/test-cluster/bin
chaos=$build/test/integration/fault/integration.chaos
[[ -x $bin/kcluster && -x $chaos ]] || { echo "soak.sh: build kube_test_cluster and integration.chaos in $build first" >&2; exit 2; }

state=$(mktemp -d)
trap '"$bin/kcluster" down --dir "$state" >/dev/null 2>&1 || true; rm -rf "$state"' EXIT
"$bin/kcluster" up --dir "$state" --bin-dir "$bin" --watch-pid $$ --apiserver-only >/dev/null
start=$(date +%s)
rc=0
KUBE_TEST_CLUSTER_DIR=$state KUBE_CHAOS_ROUNDS=$rounds "$chaos" >"$state/chaos.out" 2>&1 || rc=$?
if ((rc != 0)); then cp "$state/chaos.out" "$build/soak-chaos.out"; echo "soak: failed; output in $build/soak-chaos.out"; fi
grep -E '^CHAOS|test cases|assertions' "$state/chaos.out" || true
echo "soak: $rounds rounds in $(($(date +%s) - start)) s, exit $rc"
exit "$rc"
