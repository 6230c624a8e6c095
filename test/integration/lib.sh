# Helpers for the shell integration tests. Source it; it loads the cluster's
# environment and defines check/fail, which name what was expected.
set -euo pipefail
: "${KUBE_TEST_CLUSTER_DIR:?run through ctest: the cluster fixture sets KUBE_TEST_*}"
set -a
# shellcheck disable=SC1091
. "$KUBE_TEST_CLUSTER_DIR/cluster.env"
set +a
# kubectl is the one built with the apiserver (same version).
PATH="$(dirname "$KUBE_TEST_KUBECTL"):$PATH"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
# expect_contains DESCRIPTION HAYSTACK NEEDLE
expect_contains() {
  if [[ $2 == *"$3"* ]]; then pass "$1"; else fail "$1: expected to find '$3' in: $2"; fi
}
finish() {
  if ((failures > 0)); then echo "$failures check(s) failed" >&2; exit 1; fi
  echo "all checks passed"
}
