#!/usr/bin/env bash
# Records real watch responses from a running test cluster into this folder.
# Usage: record.sh CLUSTER_DIR [OUT_DIR]
#   CLUSTER_DIR  a cluster started with `kcluster up --dir CLUSTER_DIR --watch-pid none`
# See README.md for what each file holds.
set -euo pipefail
dir=$1
out=${2:-$(cd "$(dirname "$0")" && pwd)}
# shellcheck disable=SC1091
set -a; source "$dir/cluster.env"; set +a

k() { kubectl --kubeconfig "$KUBE_TEST_KUBECONFIG_ADMIN" -n default "$@"; }
# --http1.1: the apiserver would otherwise negotiate HTTP/2 through ALPN.
# --raw -i: keep the status line, headers and the chunked framing as sent.
watch_raw() {
  curl -sS --http1.1 --raw -i -N --cacert "$KUBE_TEST_CA" \
    --cert "$KUBE_TEST_ADMIN_CERT" --key "$KUBE_TEST_ADMIN_KEY" \
    "$KUBE_TEST_SERVER/api/v1/namespaces/default/configmaps?$1"
}
# Removes the chunked framing (the decoder's input is the de-chunked body).
dechunk() {
  python3 - "$1" "$2" <<'PY'
import sys
raw = open(sys.argv[1], 'rb').read()
head, _, rest = raw.partition(b'\r\n\r\n')
assert b'transfer-encoding: chunked' in head.lower(), head
body = b''
while True:
    line, _, rest = rest.partition(b'\r\n')
    size = int(line.split(b';')[0], 16)
    if size == 0:
        break
    body += rest[:size]
    assert rest[size:size + 2] == b'\r\n'
    rest = rest[size + 2:]
open(sys.argv[2], 'wb').write(body)
PY
}

k delete configmap rec-initial rec-small rec-text rec-large --ignore-not-found >/dev/null
k create configmap rec-initial --from-literal=a=1 >/dev/null

# 1. configmaps: an initial ADDED, creates/updates/deletes, then the bookmark
#    the server sends ~2 s before timeoutSeconds expires.
watch_raw 'watch=true&allowWatchBookmarks=true&timeoutSeconds=8' >"$out/configmaps.http" &
pid=$!
sleep 1
k create configmap rec-small --from-literal=k=v >/dev/null
k create configmap rec-text \
  --from-literal=quotes='say "hi" <b> & \back\slash' \
  --from-literal=unicode='grüße 日本語 🚀' \
  --from-literal=multiline=$'line1\nline2\r\n\ttabbed' >/dev/null
# ~6 KiB of data: the event spans several HTTP chunks.
k create configmap rec-large --from-literal=blob="$(head -c 4500 /dev/zero | tr '\0' 'x')$(seq 1 400 | tr '\n' ',')" >/dev/null
k label configmap rec-small tier=backend >/dev/null
k patch configmap rec-text --type merge -p '{"data":{"added":"later"}}' >/dev/null
k delete configmap rec-small >/dev/null
k delete configmap rec-large >/dev/null
wait "$pid" || true
dechunk "$out/configmaps.http" "$out/configmaps.jsonl"

# 2. expired: reconnect from the first event's resourceVersion after the
#    apiserver restarted (its watch cache now starts at the current revision)
#    and etcd was compacted -> a 200 response whose only event is ERROR
#    (410 Expired). Without the restart the watch cache still serves that RV.
first_rv=$(head -n 1 "$out/configmaps.jsonl" | jq -r .object.metadata.resourceVersion)
"$KUBE_TEST_KCLUSTER" restart-apiserver --dir "$dir" >/dev/null
"$KUBE_TEST_KCLUSTER" compact --dir "$dir" >/dev/null
watch_raw "watch=true&resourceVersion=$first_rv&timeoutSeconds=3" >"$out/expired.http" || true
dechunk "$out/expired.http" "$out/expired.jsonl"

# 3. initial-events: streaming list (sendInitialEvents) ends with the bookmark
#    annotated k8s.io/initial-events-end.
watch_raw 'watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=3' \
  >"$out/initial-events.http" || true
dechunk "$out/initial-events.http" "$out/initial-events.jsonl"

k delete configmap rec-initial rec-text --ignore-not-found >/dev/null
