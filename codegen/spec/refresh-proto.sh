#!/usr/bin/env bash
# Pins the .proto files of the built-in types, and the Go field facts the
# protobuf reader needs, from the Go modules the test cluster builds
# (test/cluster/go.mod), into codegen/spec/<kubernetes version>/proto/.
# Needs the Go module proxy (or a warm module cache), not a running cluster.
#
#   codegen/spec/refresh-proto.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export GOTOOLCHAIN=local
cd "$root/test/cluster"
modules=(k8s.io/api k8s.io/apimachinery k8s.io/apiextensions-apiserver k8s.io/kube-aggregator)
go mod download "${modules[@]}"
version=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
args=()
for m in "${modules[@]}"; do args+=("$m=$(go list -m -f '{{.Dir}}' "$m")"); done
python3 "$root/codegen/spec/refresh_proto.py" "$root/codegen/spec/$version/proto" "${args[@]}"
