#!/usr/bin/env bash
# Builds the test cluster's binaries (kube-apiserver, etcd, kcluster, and
# toxiproxy-server from its own module in toxiproxy/, whose dependencies must
# not move k8s.io/kubernetes') from Go modules and links them into OUT_DIR.
# Builds are cached by a key over both modules' sources, go.mod/go.sum, the Go
# version and the flags, in
# ${KUBE_CLUSTER_CACHE:-~/.cache/kube-sdk/cluster}, so a second run (even from
# a fresh clone on the same machine) does not rebuild anything.
set -euo pipefail
out_dir=${1:?usage: build.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
export GOTOOLCHAIN=local GOFLAGS=-mod=mod

k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$here/go.mod")
k8s_minor=${k8s_version#v1.}; k8s_minor=${k8s_minor%%.*}
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor"
ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"

key=$( { cd "$here"; cat go.mod go.sum build.sh toxiproxy/go.mod toxiproxy/go.sum;
         find cmd toxiproxy -name '*.go' | sort | xargs cat;
         go env GOVERSION GOARCH; echo "$ldflags"; } | sha256sum | cut -c1-16)
cache=${KUBE_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kube-sdk/cluster}/$key

bins=(kube-apiserver etcd kcluster toxiproxy-server)
missing=0
for b in "${bins[@]}"; do [[ -x $cache/$b ]] || missing=1; done
if (( missing )); then
  echo "test-cluster: building kube-apiserver $k8s_version, etcd, kcluster and toxiproxy-server (cache $cache)"
  start=$(date +%s)
  tmp=$cache.tmp.$$
  mkdir -p "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$here" && go build -trimpath -ldflags "$ldflags" -o "$tmp/" \
      k8s.io/kubernetes/cmd/kube-apiserver ./cmd/etcd ./cmd/kcluster)
  toxi_start=$(date +%s)
  (cd "$here/toxiproxy" && go build -trimpath -ldflags "-s -w" -o "$tmp/toxiproxy-server" \
      github.com/Shopify/toxiproxy/v2/cmd/server)
  echo "test-cluster: toxiproxy-server built in $(( $(date +%s) - toxi_start ))s"
  rm -rf "$cache" && mv "$tmp" "$cache"
  trap - EXIT
  echo "test-cluster: built in $(( $(date +%s) - start ))s"
fi

mkdir -p "$out_dir"
for b in "${bins[@]}"; do
  ln -sfn "$cache/$b" "$out_dir/$b"
done
