#!/usr/bin/env bash
# samples/configmap-mirror against the real cluster, driven and checked with
# kubectl. Checks:
#   1. a ConfigMap labelled mirror=true that exists before the start is mirrored
#   2. one created later is mirrored with its data; an unlabelled one is not
#   3. a change of the source's data reaches the mirror
#   4. labelling an existing ConfigMap mirrors it
#   5. a deleted mirror is recreated
#   6. removing the label deletes the mirror; deleting the source deletes the mirror
#   7. a target ConfigMap that is not a mirror is never overwritten or deleted
#   8. SIGTERM -> exit 0
. "$(dirname "$0")/../../test/integration/lib.sh"
prog=${1:?usage: test.sh PATH_TO_configmap-mirror}
export KUBECONFIG=$KUBE_TEST_KUBECONFIG_ADMIN
k() { kubectl "$@"; }
src=mirror-src-$RANDOM$RANDOM
dst=mirror-dst-$RANDOM$RANDOM
log=$(mktemp)
pid=
cleanup() {
  [[ -n "$pid" ]] && kill -9 "$pid" 2>/dev/null
  k delete namespace "$src" "$dst" --wait=false >/dev/null 2>&1 || true
  rm -f "$log"
}
trap cleanup EXIT

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
wait_for() {
  local what=$1 timeout=$2 deadline
  shift 2
  deadline=$(( $(now_ms) + timeout * 1000 ))
  until "$@"; do
    if (( $(now_ms) > deadline )); then fail "timed out after ${timeout}s waiting for: $what"; return 1; fi
    sleep 0.2
  done
  pass "$what"
}
data() { k -n "$1" get configmap "$2" -o 'jsonpath={.data}' 2>/dev/null || true; }
same_data() { local a b; a=$(data "$src" "$1"); b=$(data "$dst" "$1"); [[ -n "$a" && "$a" == "$b" ]]; }
exists() { k -n "$1" get configmap "$2" >/dev/null 2>&1; }
gone() { ! exists "$1" "$2"; }
uid() { k -n "$1" get configmap "$2" -o 'jsonpath={.metadata.uid}' 2>/dev/null || true; }

k create namespace "$src" >/dev/null
k create namespace "$dst" >/dev/null
k -n "$src" create configmap early --from-literal=greeting=hello >/dev/null
k -n "$src" label configmap early mirror=true >/dev/null
k -n "$dst" create configmap squatter --from-literal=owner=someone-else >/dev/null

if out=$("$prog" --from "$src" --to "$src" 2>&1); then fail "--from == --to accepted"; else
  expect_contains "same namespace refused" "$out" "must be different"; fi

"$prog" --from "$src" --to "$dst" >"$log" 2>&1 &
pid=$!
synced() { grep -q "caches synced" "$log"; }
wait_for "mirror reports synced caches" 30 synced

# 1. Pre-existing labelled ConfigMap.
wait_for "pre-existing labelled ConfigMap mirrored" 20 same_data early
ann=$(k -n "$dst" get configmap early -o 'go-template={{index .metadata.annotations "configmap-mirror/source"}}')
[[ "$ann" == "$src/early" ]] && pass "mirror names its source" || fail "annotation: got [$ann]"

# 2. New labelled and unlabelled ConfigMaps.
k -n "$src" create configmap app --from-literal=mode=fast --from-literal=level=3 >/dev/null
k -n "$src" label configmap app mirror=true >/dev/null
k -n "$src" create configmap plain --from-literal=x=1 >/dev/null
wait_for "new labelled ConfigMap mirrored with both keys" 20 same_data app
[[ "$(k -n "$dst" get configmap app -o 'jsonpath={.data.level}')" == 3 ]] && pass "mirror data.level = 3" || fail "mirror data.level"

# 3. Updates follow.
k -n "$src" patch configmap app --type=merge -p '{"data":{"mode":"safe"}}' >/dev/null
mode_safe() { [[ "$(k -n "$dst" get configmap app -o 'jsonpath={.data.mode}' 2>/dev/null)" == safe ]]; }
wait_for "source update reaches the mirror" 20 mode_safe

# 4. Labelling later.
k -n "$src" label configmap plain mirror=true >/dev/null
wait_for "ConfigMap labelled later is mirrored" 20 same_data plain

# 5. Deleted mirror recreated.
old=$(uid "$dst" app)
k -n "$dst" delete configmap app >/dev/null
recreated() { local u; u=$(uid "$dst" app); [[ -n "$u" && "$u" != "$old" ]]; }
wait_for "deleted mirror recreated" 20 recreated
wait_for "recreated mirror has the current data" 20 same_data app

# 6. Label removed / source deleted.
k -n "$src" label configmap plain mirror- >/dev/null
wait_for "unlabelled source: mirror deleted" 20 gone "$dst" plain
k -n "$src" delete configmap early >/dev/null
wait_for "deleted source: mirror deleted" 20 gone "$dst" early

# 7. A target ConfigMap that is not a mirror.
k -n "$src" create configmap squatter --from-literal=owner=me >/dev/null
k -n "$src" label configmap squatter mirror=true >/dev/null
not_a_mirror_logged() { grep -q "$dst/squatter exists and is not a mirror" "$log"; }
wait_for "target that is not a mirror is reported" 20 not_a_mirror_logged
[[ "$(k -n "$dst" get configmap squatter -o 'jsonpath={.data.owner}')" == someone-else ]] &&
  pass "non-mirror target not overwritten" || fail "non-mirror target was overwritten"
before=$(grep -c "$src/squatter -> done" "$log" || true)
k -n "$src" delete configmap squatter >/dev/null
# The delete is reconciled; the squatter must survive it. Wait for that reconcile, then look.
sq_reconciled() { [[ $(grep -c "$src/squatter -> done" "$log" || true) -gt $before ]]; }
wait_for "source of the non-mirror deleted and reconciled" 20 sq_reconciled
exists "$dst" squatter && pass "non-mirror target not deleted" || fail "non-mirror target deleted"

# 8. Clean exit.
kill -TERM "$pid"
if wait "$pid"; then pass "SIGTERM: exit 0"; else fail "exit status $? after SIGTERM"; fi
pid=
grep -q "stopped after" "$log" && pass "stop logged" || fail "no stop line"
echo "---- mirror log (last 20 lines) ----"
tail -n 20 "$log"
finish
