#!/usr/bin/env bash
# kubectl, an independent client, reads the namespaces of the test cluster with
# each generated kubeconfig; the unprivileged user is refused secrets with 403.
. "$(dirname "$0")/lib.sh"

for kc in "$KUBE_TEST_KUBECONFIG_ADMIN" "$KUBE_TEST_KUBECONFIG_ADMIN_TOKEN" "$KUBE_TEST_KUBECONFIG_USER"; do
  out=$(kubectl --kubeconfig "$kc" get namespaces -o name 2>&1) || fail "$(basename "$kc"): get namespaces failed: $out"
  expect_contains "$(basename "$kc") lists namespaces" "$out" "namespace/kube-system"
done

# Admin identities may read secrets.
for kc in "$KUBE_TEST_KUBECONFIG_ADMIN" "$KUBE_TEST_KUBECONFIG_ADMIN_TOKEN"; do
  kubectl --kubeconfig "$kc" get secrets -n default >/dev/null 2>&1 && pass "$(basename "$kc") lists secrets" ||
    fail "$(basename "$kc") cannot list secrets"
done

# The unprivileged user may not: HTTP 403 with the server's RBAC message.
if out=$(kubectl --kubeconfig "$KUBE_TEST_KUBECONFIG_USER" get secrets -n default -v=6 2>&1); then
  fail "unprivileged user listed secrets"
else
  expect_contains "unprivileged user gets HTTP 403" "$out" "403 Forbidden"
  expect_contains "403 carries the RBAC message" "$out" 'User "alice" cannot list resource "secrets"'
fi
finish
