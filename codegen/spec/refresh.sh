#!/usr/bin/env bash
# Captures the OpenAPI v3 documents served by the project's real test cluster
# (kube-apiserver built from Go modules, see test/cluster) into
# codegen/spec/<kubernetes version>/: index.json (/openapi/v3) and one file per
# group-version path (api__v1.json, apis__apps__v1.json, ...). The files are
# data: the generator reads them; nothing here edits them by hand.
#
#   codegen/spec/refresh.sh [BUILD_DIR]     (default: build/spec, created)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/spec}
export GOTOOLCHAIN=local
"$root/test/cluster/build.sh" "$build/cluster-bin" >&2
kcluster=$build/cluster-bin/kcluster
state=$build/cluster
trap '"$kcluster" down --dir "$state" >/dev/null 2>&1 || true' EXIT
"$kcluster" up --dir "$state" --watch-pid $$ --apiserver-only >/dev/null
set -a; . "$state/cluster.env"; set +a

get() { # PATH -> stdout, verified TLS with the admin client certificate
  curl -sSf --cacert "$KUBE_TEST_CA" --cert "$KUBE_TEST_ADMIN_CERT" --key "$KUBE_TEST_ADMIN_KEY" \
    -H 'Accept: application/json' "$KUBE_TEST_SERVER$1"
}
version=$(get /version | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p')
out=$root/codegen/spec/$version
rm -rf "$out" && mkdir -p "$out"
get /openapi/v3 > "$out/index.json"
# index.json: {"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=..."}, ...}}
grep -o '"serverRelativeURL": *"[^"]*"' "$out/index.json" | sed 's/.*: *"\(.*\)"/\1/' | while read -r url; do
  path=${url%%\?*}; path=${path#/openapi/v3/}
  get "$url" > "$out/$(echo "$path" | sed 's|/|__|g').json"
done
echo "codegen/spec: wrote $(ls "$out" | wc -l) documents for $version to $out" >&2
