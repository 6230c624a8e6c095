#!/usr/bin/env bash
# kube-exec against a pod on the test cluster's fake nodes (KWOK runs the
# command on this machine): its output and error match kubectl exec's, stdin
# reaches the command with -i, and a missing pod or container is an error
# with the server's message.
. "$(dirname "$0")/../../test/integration/lib.sh"
prog=${1:?usage: test.sh PATH_TO_kube-exec}
export KUBECONFIG=$KUBE_TEST_KUBECONFIG_ADMIN
k() { kubectl "$@"; }
ns=kube-exec-$RANDOM$RANDOM
trap 'k delete namespace "$ns" --wait=false >/dev/null 2>&1' EXIT
k create namespace "$ns" >/dev/null
k -n "$ns" run p1 --image=registry.invalid/none:1 --restart=Never >/dev/null
k -n "$ns" wait --for=jsonpath='{.status.phase}'=Running pod/p1 --timeout=60s >/dev/null ||
  fail "pod p1 did not become Running"

# The two streams arrive on channels of their own: compare the lines, not their order.
got=$("$prog" -n "$ns" p1 -- sh -c 'echo out; echo err >&2' 2>&1 | sort) || fail "kube-exec failed: $got"
want=$(k -n "$ns" exec p1 -- sh -c 'echo out; echo err >&2' 2>&1 | sort)
[[ $got == "$want" ]] && pass "output and error as kubectl exec's: $(tr '\n' ' ' <<<"$got")" ||
  fail "kube-exec gave [$got], kubectl [$want]"

out=$("$prog" -n "$ns" p1 -- sh -c 'echo only-out; echo only-err >&2' 2>/dev/null)
[[ $out == only-out ]] && pass "stdout alone on stdout" || fail "stdout: [$out]"
err=$("$prog" -n "$ns" p1 -- sh -c 'echo only-out; echo only-err >&2' 2>&1 >/dev/null)
[[ $err == only-err ]] && pass "stderr alone on stderr" || fail "stderr: [$err]"

got=$(printf 'from stdin\n' | "$prog" -n "$ns" -i p1 -- head -c 11) || fail "kube-exec -i failed"
[[ $got == "from stdin" ]] && pass "stdin reaches the command with -i" || fail "stdin: [$got]"

if out=$("$prog" -n "$ns" no-such-pod -- true 2>&1); then
  fail "exec in a missing pod succeeded"
else
  expect_contains "a missing pod is named" "$out" 'pods "no-such-pod" not found'
fi
if out=$("$prog" -n "$ns" -c nope p1 -- true 2>&1); then
  fail "exec in a missing container succeeded"
else
  expect_contains "a missing container is named" "$out" "nope"
fi
finish
