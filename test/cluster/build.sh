#!/usr/bin/env bash
# Builds the test cluster's binaries from Go modules and links them into
# OUT_DIR: kube-apiserver, kube-controller-manager, kube-scheduler and kubectl
# (one k8s.io/kubernetes version, one `go build`, so their shared packages
# compile once), etcd, kcluster, and from modules of their own, whose
# dependencies must not move k8s.io/kubernetes', toxiproxy-server
# (toxiproxy/) and kwok (kwok/).
# Builds are cached by a key over the modules' sources, go.mod/go.sum, the Go
# version and the flags, in
# ${KUBE_CLUSTER_CACHE:-~/.cache/kube-sdk/cluster}, so a second run (even from
# a fresh clone on the same machine) does not rebuild anything.
set -euo pipefail
out_dir=${1:?usage: build.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
export GOTOOLCHAIN=local GOFLAGS=-mod=mod

k8s_version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit}' "$here/go.mod")
k8s_minor=${k8s_version#v1.}; k8s_minor=${k8s_minor%%.*}
# The version variables, as Kubernetes' own build sets them: the servers read
# component-base's, kubectl's `version` client-go's.
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

key=$( { cd "$here"; cat go.mod go.sum build.sh toxiproxy/go.mod toxiproxy/go.sum kwok/go.mod kwok/go.sum;
         find cmd toxiproxy kwok -type f | sort | xargs cat;
         go env GOVERSION GOARCH; echo "$ldflags"; } | sha256sum | cut -c1-16)
cache=${KUBE_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kube-sdk/cluster}/$key

# One build at a time per key: a second build tree (the clang build, the
# demo) waits for the first and then finds the binaries cached.
mkdir -p "$(dirname "$cache")"
exec 9>"$cache.lock"
flock 9

bins=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kcluster toxiproxy-server kwok)
missing=0
for b in "${bins[@]}"; do [[ -x $cache/$b ]] || missing=1; done
if (( missing )); then
  echo "test-cluster: building ${bins[*]} (Kubernetes $k8s_version; cache $cache)"
  start=$(date +%s)
  tmp=$cache.tmp.$$
  mkdir -p "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$here" && go build -trimpath -ldflags "$ldflags" -o "$tmp/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl ./cmd/etcd ./cmd/kcluster)
  echo "test-cluster: Kubernetes, etcd and kcluster built in $(( $(date +%s) - start ))s"
  toxi_start=$(date +%s)
  (cd "$here/toxiproxy" && go build -trimpath -ldflags "-s -w" -o "$tmp/toxiproxy-server" \
      github.com/Shopify/toxiproxy/v2/cmd/server)
  echo "test-cluster: toxiproxy-server built in $(( $(date +%s) - toxi_start ))s"
  kwok_start=$(date +%s)
  (cd "$here/kwok" && go build -trimpath -ldflags "-s -w" -o "$tmp/kwok" sigs.k8s.io/kwok/cmd/kwok)
  echo "test-cluster: kwok built in $(( $(date +%s) - kwok_start ))s"
  rm -rf "$cache" && mv "$tmp" "$cache"
  trap - EXIT
  echo "test-cluster: built in $(( $(date +%s) - start ))s"
fi

mkdir -p "$out_dir"
for b in "${bins[@]}"; do
  ln -sfn "$cache/$b" "$out_dir/$b"
done
