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
for t in "${types[@]}"; do kc get "$t" -A -o json >"$tmp/$t.json"; done
for t in "${cluster_types[@]}"; do kc get "$t" -o json >"$tmp/$t.json"; done

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
finish
