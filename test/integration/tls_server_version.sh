#!/usr/bin/env bash
# The C++ program reads /version over TLS verified against the cluster CA with
# the admin client certificate and reports what kubectl reports; with a CA that
# did not sign the serving certificate it fails with a clear TLS error.
. "$(dirname "$0")/lib.sh"
prog=${1:?usage: tls_server_version.sh PATH_TO_kube-server-version}

want=$(kubectl --kubeconfig "$KUBE_TEST_KUBECONFIG_ADMIN" get --raw /version |
  sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p')
[[ -n $want ]] || fail "kubectl did not report a server gitVersion"

if out=$("$prog" --server "$KUBE_TEST_SERVER" --ca "$KUBE_TEST_CA" \
  --cert "$KUBE_TEST_ADMIN_CERT" --key "$KUBE_TEST_ADMIN_KEY" 2>&1); then
  expect_contains "C++ client reports the server version kubectl sees" "$out" "Kubernetes server version: $want ("
  expect_contains "the SDK targets the version the cluster runs" "$out" "targets Kubernetes $want"
else
  fail "kube-server-version failed against the cluster CA: $out"
fi

if out=$("$prog" --server "$KUBE_TEST_SERVER" --ca "$KUBE_TEST_WRONG_CA" \
  --cert "$KUBE_TEST_ADMIN_CERT" --key "$KUBE_TEST_ADMIN_KEY" 2>&1); then
  fail "kube-server-version succeeded with a CA that did not sign the server: $out"
else
  expect_contains "wrong CA: the TLS handshake fails" "$out" "TLS handshake with $KUBE_TEST_SERVER failed"
  expect_contains "wrong CA: the reason is certificate verification" "$out" "certificate verify failed"
fi

# A missing CA file is named in the error.
if out=$("$prog" --server "$KUBE_TEST_SERVER" --ca /nonexistent/ca.crt 2>&1); then
  fail "kube-server-version succeeded without a CA file"
else
  expect_contains "missing CA file is named" "$out" "CA file /nonexistent/ca.crt"
fi
finish
