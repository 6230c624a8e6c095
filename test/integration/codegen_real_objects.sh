#!/usr/bin/env bash
# Real objects through the generated types: apply a manifest of richly filled
# objects of many kinds, read every kind back with kubectl (an independent
# client), and round-trip each object through its C++ type.
. "$(dirname "$0")/lib.sh"
tool=$1
manifest=$2
ns=codegen-objects-$$
kc() { kubectl --kubeconfig "$KUBE_TEST_KUBECONFIG_ADMIN" "$@"; }
cleanup() {
  kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  kc delete priorityclass codegen-objects-$$ --wait=false >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
tmp=$(mktemp -d)
trap cleanup EXIT
kc create namespace "$ns" >/dev/null
sed -e "s/__NS__/$ns/g" -e "s/__PC__/codegen-objects-$$/g" "$manifest" | kc apply -f - >/dev/null

types=(pods deployments statefulsets daemonsets replicasets jobs cronjobs services endpoints endpointslices
  configmaps secrets serviceaccounts persistentvolumeclaims resourcequotas limitranges ingresses networkpolicies
  horizontalpodautoscalers poddisruptionbudgets roles rolebindings leases events controllerrevisions)
cluster_types=(namespaces clusterroles clusterrolebindings priorityclasses apiservices flowschemas
  prioritylevelconfigurations customresourcedefinitions validatingadmissionpolicies ingressclasses storageclasses
  csidrivers runtimeclasses mutatingwebhookconfigurations validatingwebhookconfigurations)
# Each list also as the API server's protobuf answer (curl with the admin
# certificate), read right after kubectl's: the tool compares the two.
declare -A group_version  # the first group that serves the name, as kubectl picks it
while read -r name version; do
  [[ -v group_version[$name] ]] || group_version[$name]=$version
done < <(kc api-resources --no-headers -o wide |
  awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^(v[0-9]|[a-z0-9.-]+\/v[0-9])/) { print $1, $i; break } }')
protobuf_list() { # PLURAL -> $tmp/PLURAL.pb
  local gv=${group_version[$1]:-} prefix=/apis
  [[ -n $gv ]] || { fail "no group/version for $1 in kubectl api-resources"; return; }
  [[ $gv == */* ]] || prefix=/api
  curl -sSf --cacert "$KUBE_TEST_CA" --cert "$KUBE_TEST_ADMIN_CERT" --key "$KUBE_TEST_ADMIN_KEY" \
    -H 'Accept: application/vnd.kubernetes.protobuf' "$KUBE_TEST_SERVER$prefix/$gv/$1" -o "$tmp/$1.pb"
}
for t in "${types[@]}"; do kc get "$t" -A -o json >"$tmp/$t.json"; protobuf_list "$t"; done
for t in "${cluster_types[@]}"; do kc get "$t" -o json >"$tmp/$t.json"; protobuf_list "$t"; done

out=$("$tool" "$tmp"/*.json) || { echo "$out"; fail "round trip of real objects"; finish; }
echo "$out"
# every kind of the manifest was seen (it is applied into this run's namespace)
for kind in "apps/v1 Deployment" "apps/v1 StatefulSet" "apps/v1 DaemonSet" "batch/v1 CronJob" "batch/v1 Job" \
  "v1 Pod" "v1 Service" "v1 Secret" "v1 ConfigMap" "v1 PersistentVolumeClaim" "v1 ResourceQuota" "v1 LimitRange" \
  "networking.k8s.io/v1 Ingress" "networking.k8s.io/v1 NetworkPolicy" "autoscaling/v2 HorizontalPodAutoscaler" \
  "policy/v1 PodDisruptionBudget" "rbac.authorization.k8s.io/v1 Role" "rbac.authorization.k8s.io/v1 ClusterRole" \
  "coordination.k8s.io/v1 Lease" "scheduling.k8s.io/v1 PriorityClass" "apiregistration.k8s.io/v1 APIService" \
  "flowcontrol.apiserver.k8s.io/v1 FlowSchema" "v1 Namespace"; do
  expect_contains "objects of kind $kind were checked" "$out" "  $kind: "
done
total=$(sed -n 's/^round-tripped \([0-9]*\) objects.*/\1/p' <<<"$out")
if ((total >= 150)); then pass "$total objects"; else fail "only $total objects round-tripped (expected >= 150)"; fi
same=$(sed -n 's/^protobuf: \([0-9]*\) objects equal.*/\1/p' <<<"$out")
if ((same >= 150)); then pass "$same objects read from protobuf equal their JSON"; else
  fail "only ${same:-0} objects compared through protobuf (expected >= 150)"; fi
finish
