#!/usr/bin/env bash
# kube-get lists the same names kubectl does, for pods and configmaps, by
# plural, short name, kind and group-qualified name; watches see a change;
# an unknown type is an error naming it.
. "$(dirname "$0")/../../test/integration/lib.sh"
prog=${1:?usage: test.sh PATH_TO_kube-get}
export KUBECONFIG=$KUBE_TEST_KUBECONFIG_ADMIN
k() { kubectl "$@"; }
ns=kube-get-$RANDOM$RANDOM
cache=$(mktemp -d)
export KUBECACHEDIR=$cache
trap 'k delete namespace "$ns" --wait=false >/dev/null 2>&1; rm -rf "$cache"' EXIT

k create namespace "$ns" >/dev/null
for i in 1 2 3; do
  k -n "$ns" create configmap "cm-$i" --from-literal=a=$i >/dev/null
  k -n "$ns" run "pod-$i" --image=registry.invalid/none:1 --restart=Never >/dev/null
done

names_kubectl() { k -n "$ns" get "$1" -o name | sed 's|.*/||' | sort; }
names_ours() { "$prog" "$1" -n "$ns" | tail -n +2 | sort; }

k -n "$ns" create role reader --verb=get --resource=pods >/dev/null   # a non-core group: rbac.authorization.k8s.io
for type in pods po pod Pod configmaps cm ConfigMap configmaps.v1. roles roles.rbac.authorization.k8s.io \
            roles.v1.rbac.authorization.k8s.io Role.rbac.authorization.k8s.io; do
  want=$(names_kubectl "$type")
  got=$(names_ours "$type" 2>&1) || { fail "kube-get $type failed: $got"; continue; }
  if [[ "$got" == "$want" && -n "$want" ]]; then pass "kube-get $type matches kubectl"; else
    fail "kube-get $type: got [$got], kubectl [$want]"; fi
done

# All namespaces: our namespace's rows are there with their namespace.
out=$("$prog" configmaps -A)
expect_contains "-A prints NAMESPACE NAME" "$out" "$ns  cm-2"

# Cluster-scoped resources ignore -n.
out=$("$prog" namespaces)
expect_contains "namespaces are listed" "$out" "$ns"

# Watch: a configmap created after the list shows up as ADDED.
"$prog" configmaps -n "$ns" -w --timeout 6 > "$cache/watch.out" 2>&1 &
wpid=$!
# The watch starts at the list's resourceVersion, so any change made after the
# list was printed is delivered: wait for the list, not for a fixed time.
for _ in $(seq 100); do grep -q "cm-3" "$cache/watch.out" 2>/dev/null && break; sleep 0.1; done
k -n "$ns" create configmap late --from-literal=a=1 >/dev/null
wait $wpid || fail "kube-get -w exited with an error: $(cat "$cache/watch.out")"
expect_contains "watch shows the new configmap" "$(cat "$cache/watch.out")" "ADDED late"

# Unknown types name what was not found.
if out=$("$prog" nosuchthings -n "$ns" 2>&1); then fail "unknown type succeeded"; else
  expect_contains "unknown type is named" "$out" 'nosuchthings'
fi
finish
