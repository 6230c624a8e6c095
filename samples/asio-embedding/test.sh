#!/usr/bin/env bash
# asio-embedding against the real cluster: the HTTP answers (curl) follow the
# ConfigMaps kubectl creates, changes and deletes (polled with a timeout, no
# fixed sleeps); bad requests get clear 4xx answers; SIGTERM stops it with
# exit status 0.
. "$(dirname "$0")/../../test/integration/lib.sh"
prog=${1:?usage: test.sh PATH_TO_asio-embedding}
export KUBECONFIG=$KUBE_TEST_KUBECONFIG_ADMIN
k() { kubectl "$@"; }
ns=asio-embed-$RANDOM$RANDOM
out=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill -9 "$pid" 2>/dev/null || true
  k delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$out"
}
trap cleanup EXIT
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

k create namespace "$ns" >/dev/null
k -n "$ns" create configmap web-a --from-literal=k=1 >/dev/null
k -n "$ns" label configmap web-a app=web >/dev/null
k -n "$ns" create configmap db --from-literal=k=1 >/dev/null
k -n "$ns" label configmap db app=db >/dev/null

"$prog" --port 0 >"$out/log" 2>"$out/err" &
pid=$!

# The first line names the port it picked.
deadline=$(( $(now_ms) + 20000 ))
until grep -q '^listening on http://127.0.0.1:[0-9]*$' "$out/log"; do
  if (( $(now_ms) > deadline )) || ! kill -0 "$pid" 2>/dev/null; then
    fail "no 'listening on' line: $(cat "$out/log" "$out/err")"; finish; fi
  sleep 0.1
done
base=$(sed -n 's|^listening on \(http://127.0.0.1:[0-9]*\)$|\1|p' "$out/log")
pass "listening on $base"

# get PATH: prints "STATUS BODY" (curl percent-encodes nothing itself: PATH is sent as given).
get() { curl -s -o "$out/body" -w '%{http_code}' "$base$1" && echo " $(cat "$out/body")"; }
# converge DESCRIPTION PATH WANT: polls PATH until "STATUS BODY" is WANT; after
# 20 s it fails and ends the test (the next steps build on this one).
converge() {
  local got deadline=$(( $(now_ms) + 20000 ))
  until got=$(get "$2") && [[ "$got" == "$3" ]]; do
    if (( $(now_ms) > deadline )); then fail "$1: got [$got], want [$3]"; finish; fi
    sleep 0.1
  done
  pass "$1"
}
rv() { k -n "$ns" get configmap "$1" -o jsonpath='{.metadata.resourceVersion}'; }
item() { echo -n "{\"namespace\":\"$ns\",\"name\":\"$1\",\"resourceVersion\":\"$(rv "$1")\"}"; }
web="/configmaps?namespace=$ns&selector=app%3Dweb"

converge "/healthz is 200 after the sync" /healthz "200 ok"
converge "the initial web configmap" "$web" "200 {\"items\":[$(item web-a)]}"
converge "namespace without selector lists both, sorted" "/configmaps?namespace=$ns" \
  "200 {\"items\":[$(item db),$(item web-a)]}"

k -n "$ns" create configmap web-b --from-literal=k=1 >/dev/null
k -n "$ns" label configmap web-b app=web >/dev/null
converge "a new web configmap appears" "$web" "200 {\"items\":[$(item web-a),$(item web-b)]}"

old_rv=$(rv web-a)
k -n "$ns" patch configmap web-a --type=merge -p '{"data":{"k":"2"}}' >/dev/null
[[ "$(rv web-a)" != "$old_rv" ]] || fail "the patch did not change web-a's resourceVersion"
converge "a change moves web-a's resourceVersion" "$web" "200 {\"items\":[$(item web-a),$(item web-b)]}"

k -n "$ns" label configmap db app=web --overwrite >/dev/null
converge "a relabelled configmap joins the selector" "$web" \
  "200 {\"items\":[$(item db),$(item web-a),$(item web-b)]}"

k -n "$ns" delete configmap web-a >/dev/null
converge "a deleted configmap disappears" "$web" "200 {\"items\":[$(item db),$(item web-b)]}"

converge "set-based selector" "/configmaps?namespace=$ns&selector=app%20in%20(web)%2C!missing" \
  "200 {\"items\":[$(item db),$(item web-b)]}"
converge "another namespace is empty" "/configmaps?namespace=$ns-none" '200 {"items":[]}'
got=$(get "/configmaps?selector=app%3D%3D%3D") ; [[ $got == 400\ *error* ]] && pass "bad selector: 400 ($got)" || fail "bad selector: got [$got]"
got=$(get "/nope"); [[ $got == 404\ * ]] && pass "unknown path: 404" || fail "unknown path: got [$got]"
got=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$base/healthz"); [[ $got == 405 ]] && pass "POST: 405" || fail "POST: got $got"

# SIGTERM with an idle keep-alive connection open: it still stops, and exits 0.
exec 3<>"/dev/tcp/127.0.0.1/${base##*:}"
printf 'GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n' >&3
read -r -t 10 status_line <&3 || status_line=
[[ $status_line == "HTTP/1.1 200 OK"* ]] && pass "keep-alive connection open (${status_line%$'\r'})" \
  || fail "keep-alive request: got [$status_line]"
kill -TERM "$pid"
deadline=$(( $(now_ms) + 10000 ))
while kill -0 "$pid" 2>/dev/null && (( $(now_ms) < deadline )); do sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then
  fail "still running 10 s after SIGTERM"
else
  status=0
  wait "$pid" || status=$?
  pid=
  (( status == 0 )) && pass "exited 0 on SIGTERM" || fail "exit status $status: $(cat "$out/err")"
  grep -qx stopped "$out/log" && pass "printed 'stopped'" || fail "no 'stopped' line: $(cat "$out/log")"
fi
exec 3>&-
[[ -s "$out/err" ]] && fail "stderr is not empty: $(cat "$out/err")"
finish
