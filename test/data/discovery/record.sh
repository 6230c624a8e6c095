#!/bin/sh
# Records the discovery documents of a running test cluster into this folder.
# Usage: record.sh CLUSTER_DIR   (a dir made by `kcluster up --dir CLUSTER_DIR`)
# The cluster must already have the CRDs of crds.yaml applied and Established.
set -eu
dir=$1
out=$(cd "$(dirname "$0")" && pwd)
. "$dir/cluster.env"   # KUBE_TEST_SERVER
get() { # get PATH ACCEPT OUTFILE
  curl -sS --fail --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" \
    -H "Accept: $2" -D "$3.headers.tmp" -o "$3" "$KUBE_TEST_SERVER$1"
  # Keep only the header that matters to the decoder (dates etc. are noise).
  printf '%s %s\n' "${3#"$out"/}" "$(grep -i '^content-type:' "$3.headers.tmp" | tr -d '\r' | cut -d' ' -f2-)" >> "$out/content-types.txt"
  rm -f "$3.headers.tmp"
}
agg='application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json'
rm -rf "$out/aggregated" "$out/legacy" "$out/content-types.txt"
mkdir -p "$out/aggregated" "$out/legacy"
get /api "$agg" "$out/aggregated/api.json"
get /apis "$agg" "$out/aggregated/apis.json"
get /api application/json "$out/legacy/api.json"
get /apis application/json "$out/legacy/apis.json"
get /api/v1 application/json "$out/legacy/api_v1.json"
# Every served group/version, so the legacy path can rebuild the whole mapper.
for gv in $(python3 -c 'import json,sys; [print(v["groupVersion"]) for g in json.load(open(sys.argv[1]))["groups"] for v in g["versions"]]' "$out/legacy/apis.json"); do
  get "/apis/$gv" application/json "$out/legacy/apis_$(echo "$gv" | tr '/' '_').json"
done
# The server version these documents came from.
curl -sS --fail --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" \
  "$KUBE_TEST_SERVER/version" > "$out/version.json"
