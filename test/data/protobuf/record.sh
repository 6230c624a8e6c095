#!/usr/bin/env bash
# Records real protobuf (and, beside them, JSON) answers of a running test
# cluster into this folder. See README.md for what each file holds.
# Usage: record.sh CLUSTER_DIR [OUT_DIR]
#   CLUSTER_DIR  a cluster started with `kcluster up --dir CLUSTER_DIR --watch-pid none`
set -euo pipefail
dir=$1
out=${2:-$(cd "$(dirname "$0")" && pwd)}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC1091
set -a; source "$dir/cluster.env"; set +a
pb='application/vnd.kubernetes.protobuf'
get() { # ACCEPT PATH [curl args] -> stdout (the body; no failure on 4xx)
  local accept=$1 path=$2; shift 2
  curl -sS --http1.1 --cacert "$KUBE_TEST_CA" --cert "$KUBE_TEST_ADMIN_CERT" --key "$KUBE_TEST_ADMIN_KEY" \
    -H "Accept: $accept" "$@" "$KUBE_TEST_SERVER$path"
}
post() { # PATH FILE -> creates the JSON object in FILE
  get application/json "$1" -X POST -H 'Content-Type: application/json' --data-binary "@$2" -o /dev/null -f
}
ns=/api/v1/namespaces/default
get application/json "$ns/pods/rec-pod" -X DELETE -o /dev/null || true
get application/json "$ns/configmaps/rec-watch" -X DELETE -o /dev/null || true
sleep 1
# 0. A watch of pods as protobuf while rec-pod is created (ADDED), labelled
#    (MODIFIED) and, at the end, deleted (DELETED).
get "$pb;stream=watch" "$ns/pods?watch=true&timeoutSeconds=4&fieldSelector=metadata.name%3Drec-pod" \
  -N >"$out/pods-watch.pb" &
pods_watch=$!
sleep 1
post "$ns/pods" "$here/rec-pod.json"
get application/json "$ns/pods/rec-pod" -X PATCH -H 'Content-Type: application/merge-patch+json' \
  --data-binary '{"metadata":{"labels":{"watched":"yes"}}}' -o /dev/null -f

# 1. One object, as JSON and as protobuf.
get application/json "$ns/pods/rec-pod" >"$out/pod.json"
get "$pb" "$ns/pods/rec-pod" >"$out/pod.pb"
# 2. A list of the namespace's pods, both ways.
get application/json "$ns/pods" >"$out/pods-list.json"
get "$pb" "$ns/pods" >"$out/pods-list.pb"
# 3. An error: the Status of a 404, as protobuf.
get "$pb" "$ns/pods/no-such-pod" >"$out/status-404.pb"
# 4. A watch stream of configmaps as protobuf (4-byte length, then a
#    WatchEvent): an ADDED, a MODIFIED, a DELETED, the bookmark before timeout.
get "$pb;stream=watch" "$ns/configmaps?watch=true&allowWatchBookmarks=true&timeoutSeconds=5&fieldSelector=metadata.name%3Drec-watch" \
  -N >"$out/configmaps-watch.pb" &
pid=$!
sleep 1
printf '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"rec-watch","labels":{"a":"b"}},"data":{"k":"v","text":"grüße \\"hi\\""}}' >"$out/.cm.json"
post "$ns/configmaps" "$out/.cm.json"
get application/json "$ns/configmaps/rec-watch" -X PATCH -H 'Content-Type: application/merge-patch+json' \
  --data-binary '{"data":{"added":"later"}}' -o /dev/null -f
get application/json "$ns/configmaps/rec-watch" -X DELETE -o /dev/null -f
rm -f "$out/.cm.json"
get application/json "$ns/pods/rec-pod" -X DELETE -o /dev/null -f
wait "$pid" || true
wait "$pods_watch" || true
echo "record.sh: wrote $(cd "$out" && ls pod.json pod.pb pods-list.json pods-list.pb status-404.pb configmaps-watch.pb pods-watch.pb | wc -l) files to $out" >&2
