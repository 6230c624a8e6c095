#!/usr/bin/env bash
# kube-logs against a pod on the test cluster's fake nodes (KWOK serves the
# log from a file): the output is kubectl logs' byte for byte, with --tail,
# --timestamps and --since-time too; -f prints the log and keeps going until
# it is stopped; a missing pod or container, and a bad --since-time, give the
# server's message.
. "$(dirname "$0")/../../test/integration/lib.sh"
prog=${1:?usage: test.sh PATH_TO_kube-logs}
export KUBECONFIG=$KUBE_TEST_KUBECONFIG_ADMIN
k() { kubectl "$@"; }
ns=kube-logs-$RANDOM$RANDOM
out=$(mktemp -d)
trap 'k delete namespace "$ns" --wait=false >/dev/null 2>&1; rm -rf "$out"' EXIT
k create namespace "$ns" >/dev/null
k -n "$ns" run p1 --image=registry.invalid/none:1 --restart=Never >/dev/null
k -n "$ns" wait --for=jsonpath='{.status.phase}'=Running pod/p1 --timeout=60s >/dev/null ||
  fail "pod p1 did not become Running"

# same_as DESCRIPTION FLAGS...: kube-logs and kubectl logs give the same bytes.
same_as() {
  local what=$1
  shift
  "$prog" -n "$ns" "$@" p1 >"$out/ours" 2>"$out/ours.err" || fail "$what: kube-logs failed: $(cat "$out/ours.err")"
  k -n "$ns" logs "$@" p1 >"$out/theirs"
  if cmp -s "$out/ours" "$out/theirs" && [[ -s $out/ours ]]; then
    pass "$what: as kubectl logs ($(wc -l <"$out/ours") lines)"
  else
    fail "$what: kube-logs gave"$'\n'"$(cat "$out/ours")"$'\n'"kubectl"$'\n'"$(cat "$out/theirs")"
  fi
}
same_as "the whole log"
whole=$(cat "$out/ours")
same_as "--tail=1" --tail=1
[[ $(cat "$out/ours") != "$whole" ]] || fail "--tail=1 gave the whole log"
same_as "--timestamps" --timestamps
same_as "--since-time" --since-time=2026-01-01T00:00:01Z
[[ $(cat "$out/ours") != "$whole" ]] || fail "--since-time gave the whole log"
same_as "-c p1 (kubectl run names the container after the pod)" -c p1

# -f: what exists now, then it keeps running until it is stopped.
"$prog" -n "$ns" -f p1 >"$out/follow" 2>"$out/follow.err" &
follower=$!
sleep 3
if kill -0 "$follower" 2>/dev/null; then
  pass "-f is still running after 3 s"
  kill -TERM "$follower"
  status=0
  wait "$follower" || status=$?
  ((status == 0)) && pass "-f stopped by SIGTERM, exit 0" || fail "-f exited with $status after SIGTERM"
else
  wait "$follower" || true
  fail "-f ended by itself: $(cat "$out/follow.err")"
fi
[[ $(cat "$out/follow") == "$whole" ]] && pass "-f printed the log" ||
  fail "-f printed [$(cat "$out/follow")], want [$whole]"

# Refusals: the server's message, as kubectl shows it.
if got=$("$prog" -n "$ns" no-such-pod 2>&1); then
  fail "logs of a missing pod succeeded"
else
  expect_contains "a missing pod is named" "$got" 'pods "no-such-pod" not found'
fi
if got=$("$prog" -n "$ns" -c nope p1 2>&1); then
  fail "logs of a missing container succeeded"
else
  # kubectl logs checks the container itself; the server's own answer, through kubectl:
  want=$(k get --raw "/api/v1/namespaces/$ns/pods/p1/log?container=nope" 2>&1 || true)
  want=${want#Error from server (BadRequest): }
  expect_contains "a missing container: the server's message" "$got" "$want"
fi
if got=$("$prog" -n "$ns" --since-time=yesterday p1 2>&1); then
  fail "--since-time=yesterday succeeded"
else
  expect_contains "a bad --since-time: the server's message" "$got" 'parsing time "yesterday"'
fi
if got=$("$prog" -n "$ns" --since=10 --since-time=2026-01-01T00:00:01Z p1 2>&1); then
  fail "--since with --since-time succeeded"
else
  expect_contains "--since with --since-time is refused" "$got" "at most one of since_seconds and since_time"
fi
finish
