#!/usr/bin/env bash
# kube-port-forward against a pod on the test cluster's fake nodes: KWOK
# connects every pod port to a TCP server of kcluster that sends a greeting
# and then echoes (KUBE_TEST_REFUSED_POD_PORT: a port it cannot connect).
# What a local client gets through kube-port-forward equals what it gets
# through kubectl port-forward; connections are independent; SIGTERM ends
# it with status 0; a missing or pending pod is an error that names it.
. "$(dirname "$0")/../../test/integration/lib.sh"
prog=${1:?usage: test.sh PATH_TO_kube-port-forward}
export KUBECONFIG=$KUBE_TEST_KUBECONFIG_ADMIN
k() { kubectl "$@"; }
ns=kube-port-forward-$RANDOM$RANDOM
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  k delete namespace "$ns" --wait=false >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
k create namespace "$ns" >/dev/null
k -n "$ns" run p1 --image=registry.invalid/none:1 --restart=Never >/dev/null
k -n "$ns" wait --for=jsonpath='{.status.phase}'=Running pod/p1 --timeout=60s >/dev/null ||
  fail "pod p1 did not become Running"

# start NAME CMD...: runs CMD in the background, its output in $work/NAME.
start() {
  local name=$1
  shift
  "$@" >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
}
# local_port NAME: waits for "Forwarding from 127.0.0.1:PORT -> ..." and prints PORT.
local_port() {
  local i line
  for ((i = 0; i < 200; i++)); do
    line=$(grep -m1 '^Forwarding from 127.0.0.1:' "$work/$1.out" 2>/dev/null) && break
    sleep 0.05
  done
  [[ -n ${line:-} ]] || fail "$1 printed no 'Forwarding from' line: $(cat "$work/$1.out" "$work/$1.err")"
  line=${line#Forwarding from 127.0.0.1:}
  echo "${line%% *}"
}
# talk PORT TEXT: connects, reads the greeting, sends TEXT, reads it back;
# prints what it read.
talk() {
  local fd greeting back
  exec {fd}<>"/dev/tcp/127.0.0.1/$1" || return 1
  IFS= read -r -t 10 greeting <&"$fd" || { exec {fd}>&-; return 1; }
  printf '%s\n' "$2" >&"$fd"
  IFS= read -r -t 10 back <&"$fd" || { exec {fd}>&-; return 1; }
  exec {fd}>&-
  printf '%s|%s\n' "$greeting" "$back"
}

start ours "$prog" -n "$ns" p1 :8080
ours=$(local_port ours)
start theirs kubectl -n "$ns" port-forward pod/p1 :8080
theirs=$(local_port theirs)

got=$(talk "$ours" "hello through kube") || fail "no answer through kube-port-forward: $(cat "$work/ours.err")"
want=$(talk "$theirs" "hello through kube") || fail "no answer through kubectl port-forward"
[[ $got == "$want" && $got == "kcluster port-forward target|hello through kube" ]] &&
  pass "a connection gets what it gets through kubectl port-forward: [$got]" ||
  fail "kube-port-forward gave [$got], kubectl port-forward [$want]"

# Two connections at once, each with its own bytes.
exec {a}<>"/dev/tcp/127.0.0.1/$ours"
exec {b}<>"/dev/tcp/127.0.0.1/$ours"
IFS= read -r -t 10 ga <&"$a"
IFS= read -r -t 10 gb <&"$b"
printf 'to b\n' >&"$b"
printf 'to a\n' >&"$a"
IFS= read -r -t 10 ra <&"$a"
IFS= read -r -t 10 rb <&"$b"
exec {a}>&- {b}>&-
[[ $ra == "to a" && $rb == "to b" && $ga == "$gb" ]] && pass "two connections at once keep their own bytes" ||
  fail "concurrent connections: a [$ga|$ra], b [$gb|$rb]"

# A port the kubelet cannot connect: that connection is closed and logged,
# the forwarder goes on.
start refused "$prog" -n "$ns" p1 ":$KUBE_TEST_REFUSED_POD_PORT"
refused=$(local_port refused)
exec {r}<>"/dev/tcp/127.0.0.1/$refused"
status=0
IFS= read -r -t 10 line <&"$r" || status=$?
exec {r}>&-
[[ $status == 1 ]] && pass "a refused port's connection is closed" ||
  fail "a refused port's connection: read status $status (1: closed, >128: timed out) [${line:-}]"
for ((i = 0; i < 100; i++)); do grep -q "127.0.0.1:1: connect: connection refused" "$work/refused.err" && break; sleep 0.05; done
expect_contains "a refused port is logged with the kubelet's error" "$(cat "$work/refused.err")" \
  "127.0.0.1:1: connect: connection refused"
again=$(talk "$ours" "still forwarding") || fail "kube-port-forward stopped after another forwarder's failure"
expect_contains "the forwarder goes on" "$again" "still forwarding"

kill -TERM "${pids[0]}"
if wait "${pids[0]}"; then pass "SIGTERM ends it with status 0"; else fail "SIGTERM: status $?"; fi
if (exec 3<>"/dev/tcp/127.0.0.1/$ours") 2>/dev/null; then fail "port $ours still listens after SIGTERM"; else
  pass "the local port is closed after SIGTERM"
fi
expect_contains "it says what it forwarded" "$(cat "$work/ours.err")" "connection(s) forwarded, 0 failed"

if out=$("$prog" -n "$ns" no-such-pod :8080 2>&1); then
  fail "port-forward to a missing pod succeeded"
else
  expect_contains "a missing pod is named" "$out" 'pods "no-such-pod" not found'
fi
k -n "$ns" apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: pending}
spec:
  schedulerName: nobody
  containers: [{name: main, image: registry.invalid/none:1}]
YAML
if out=$("$prog" -n "$ns" pending :8080 2>&1); then
  fail "port-forward to a pending pod succeeded"
else
  expect_contains "a pod that is not running is named" "$out" "pod pending is not running (phase Pending)"
fi
if out=$("$prog" -n "$ns" p1 80:99999 2>&1); then fail "port 99999 was taken"; else
  expect_contains "a bad port is named" "$out" '"99999"'
fi
finish
