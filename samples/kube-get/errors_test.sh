#!/usr/bin/env bash
# Every failure a user meets on kube-get's command line is one line that
# names the server or file and the likely cause, without Boost's
# "[category:value at file:line]" suffix. Prints kubectl's text beside ours
# for each case (the table in docs/guides/errors.md).
#
#   errors_test.sh PATH_TO_kube-get [watch-expired]
#
# watch-expired runs only the 410 case, which compacts etcd (the test that
# runs it is RUN_SERIAL).
. "$(dirname "$0")/../../test/integration/lib.sh"
prog=${1:?usage: errors_test.sh PATH_TO_kube-get [watch-expired]}
mode=${2:-all}
tmp=$(mktemp -d)
export KUBECACHEDIR=$tmp/cache  # discovery is asked every time, as a first run does
servers=()
trap 'for p in "${servers[@]}"; do kill -- "-$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# kubeconfig SERVER [CLUSTER_LINES] [USER_LINES]: a kubeconfig in $tmp.
n=0
kubeconfig() {
  n=$((n + 1))
  local f=$tmp/kubeconfig-$n.yaml
  cat > "$f" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: $1
${2:-    certificate-authority: $KUBE_TEST_CA}
users:
- name: u
  user:
${3:-    token: not-a-valid-token}
contexts:
- name: x
  context: {cluster: c, user: u, namespace: default}
current-context: x
EOF
  echo "$f"
}

# check NAME 'NEEDLE...' -- ARGS: kube-get ARGS fails with one line holding
# every needle, and kubectl's answer to the same ARGS is shown beside it.
check() {
  local name=$1
  shift
  local needles=()
  while [[ $1 != -- ]]; do needles+=("$1"); shift; done
  shift
  local ours theirs
  if ours=$("$prog" "$@" 2>&1 >/dev/null); then fail "$name: kube-get succeeded"; return; fi
  # kubectl's last line is its summary (the lines before repeat discovery's).
  theirs=$(kubectl get "$@" 2>&1 >/dev/null | grep -v '^$' | tail -n 1 || true)
  echo "case: $name"
  echo "  kubectl:  $theirs"
  echo "  kube-get: $ours"
  # The last line is ours; an exec plugin's own stderr comes before it.
  local last
  last=$(tail -n 1 <<<"$ours")
  for needle in "${needles[@]}"; do expect_contains "$name names '$needle'" "$last" "$needle"; done
  if [[ $last == *"[system:"* || $last == *"[asio."* || $last == *"[kube."* || $last == *"/usr/include/"* ]]; then
    fail "$name: Boost's code suffix or a source location in: $last"
  fi
}

all_cases() {
  addr=${KUBE_TEST_SERVER#https://}

  # Connection refused: a port nobody listens on.
  port=$(free_port)
  check "connection refused" "127.0.0.1:$port" "refused" "is the API server running" -- \
    pods --kubeconfig "$(kubeconfig "https://127.0.0.1:$port")"

  # DNS: a name that cannot resolve (.invalid is reserved for that).
  check "DNS failure" "no-such-host.invalid" "cannot resolve" "DNS" -- \
    pods --kubeconfig "$(kubeconfig "https://no-such-host.invalid:6443")"

  # TLS: the certificate does not hold the name we verify.
  check "TLS name mismatch" "$addr" "not for wrong.example.com" "tls-server-name" -- \
    pods --kubeconfig "$(kubeconfig "$KUBE_TEST_SERVER" "    certificate-authority: $KUBE_TEST_CA
    tls-server-name: wrong.example.com")"

  # TLS: a CA that did not sign the server's certificate.
  check "unknown certificate authority" "$addr" "$KUBE_TEST_WRONG_CA" "is that the CA of this cluster" -- \
    pods --kubeconfig "$(kubeconfig "$KUBE_TEST_SERVER" "    certificate-authority: $KUBE_TEST_WRONG_CA")"

  # TLS: a server whose certificate expired (openssl s_server, its own CA).
  (
    cd "$tmp"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -subj /CN=expired-test-ca -days 2 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=localhost \
      -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
    # -days -1: notAfter a day before now.
    openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out expired.crt -days -1 \
      -copy_extensions copy 2>/dev/null
    openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out valid.crt -days 2 \
      -copy_extensions copy 2>/dev/null
  )
  # serve CERT: a TLS server on a free port ($port) that accepts and never
  # answers. It and the `sleep` that holds its stdin open (s_server ends
  # the session at stdin's end) are a process group of their own, killed
  # at exit, with no descriptor of the test's: ctest waits for those.
  serve() {
    port=$(free_port)
    setsid bash -c 'sleep 600 | exec openssl s_server -quiet -accept "127.0.0.1:$0" -cert "$1" -key "$2"' \
      "$port" "$tmp/$1" "$tmp/srv.key" </dev/null >/dev/null 2>&1 &
    servers+=($!)
    for _ in $(seq 100); do
      (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
      sleep 0.05
    done
  }
  serve expired.crt
  check "expired certificate" "127.0.0.1:$port" "expired on" "needs a new certificate" -- \
    pods --kubeconfig "$(kubeconfig "https://127.0.0.1:$port" "    certificate-authority: $tmp/ca.crt")"

  # Timeout: TLS is answered, the request never is.
  serve valid.crt
  check "request timeout" "127.0.0.1:$port" "did not answer within 2000 ms" "overloaded" -- \
    pods --request-timeout 2s --kubeconfig "$(kubeconfig "https://127.0.0.1:$port" "    certificate-authority: $tmp/ca.crt")"

  # 401: a bearer token the apiserver does not know; the message says which
  # credentials were refused, never their value.
  check "401 Unauthorized" "$addr" "refused the bearer token" "401" -- \
    pods --kubeconfig "$(kubeconfig "$KUBE_TEST_SERVER")"
  out=$("$prog" pods --kubeconfig "$tmp/kubeconfig-$n.yaml" 2>&1 || true)
  [[ $out != *not-a-valid-token* ]] && pass "the token is not in the message" || fail "the token is in: $out"

  # 403: RBAC refuses alice: verb, resource and namespace are named.
  check "403 Forbidden" 'cannot list resource "secrets"' 'in the namespace "kube-system"' 'User "alice"' -- \
    secrets -n kube-system --kubeconfig "$KUBE_TEST_KUBECONFIG_USER"

  # Unknown resource type.
  check "unknown resource type" 'resource type "nosuchthings"' -- nosuchthings --kubeconfig "$KUBE_TEST_KUBECONFIG_ADMIN"

  # kubeconfig missing, malformed (file and line), context missing.
  check "kubeconfig missing" "$tmp/absent.yaml" "No such file" -- pods --kubeconfig "$tmp/absent.yaml"
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: [}\n' > "$tmp/malformed.yaml"
  check "kubeconfig malformed" "$tmp/malformed.yaml" "line 5" -- pods --kubeconfig "$tmp/malformed.yaml"
  check "context missing" 'context "nosuch"' "$KUBE_TEST_KUBECONFIG_ADMIN" -- \
    pods --kubeconfig "$KUBE_TEST_KUBECONFIG_ADMIN" --context nosuch

  # Exec plugins: not installed; failing, with the last line of its stderr.
  exec_user() {
    printf '    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      interactiveMode: Never\n      command: %s\n' "$1"
  }
  check "exec plugin not found" '"kube-test-no-such-plugin"' "not found" "installed" -- \
    pods --kubeconfig "$(kubeconfig "$KUBE_TEST_SERVER" "" "$(exec_user kube-test-no-such-plugin)")"
  printf '#!/bin/sh\necho "checking the session" >&2\necho "error: the session expired, run my-login" >&2\nexit 3\n' \
    > "$tmp/failing-plugin"
  chmod +x "$tmp/failing-plugin"
  check "exec plugin failing" "$tmp/failing-plugin" "exited with status 3" "error: the session expired, run my-login" -- \
    pods --kubeconfig "$(kubeconfig "$KUBE_TEST_SERVER" "" "$(exec_user "$tmp/failing-plugin")")"
}

# 410 on a plain watch (no informer): etcd compacted past the
# resourceVersion asked for. Events have no watch cache in the apiserver, so
# the watch goes to etcd, which refuses it.
watch_expired() {
  "$KUBE_TEST_KCLUSTER" compact --dir "$KUBE_TEST_CLUSTER_DIR" >/dev/null
  local ours theirs
  ours=$("$prog" events -n default -w --resource-version 1 --timeout 5 --kubeconfig "$KUBE_TEST_KUBECONFIG_ADMIN" 2>&1 \
    >/dev/null) && fail "410 watch: kube-get succeeded"
  theirs=$(kubectl --kubeconfig "$KUBE_TEST_KUBECONFIG_ADMIN" get --raw \
    "/api/v1/namespaces/default/events?watch=1&resourceVersion=1&timeoutSeconds=5" 2>&1 | head -c 300)
  echo "case: 410 on a plain watch"
  echo "  kubectl:  $theirs"
  echo "  kube-get: $ours"
  for needle in "from resourceVersion 1" "410 Expired" "list again"; do
    expect_contains "410 watch names '$needle'" "$ours" "$needle"
  done
}

if [[ $mode == watch-expired ]]; then watch_expired; else all_cases; fi
finish
