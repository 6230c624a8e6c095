#!/usr/bin/env bash
# Bad CRD manifests and specs: kube-codegen and kube-yaml2json fail with a
# message that names the file and what is wrong, never a traceback.
set -uo pipefail
py=$1 gen=$2 y2j=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
# expect_error NAME EXPECTED-SUBSTRING COMMAND...
expect_error() {
  local name=$1 want=$2
  shift 2
  local out
  if out=$("$@" 2>&1); then
    echo "FAIL: $name: succeeded"; failures=$((failures + 1)); return
  fi
  if [[ $out == *Traceback* ]]; then
    echo "FAIL: $name: a Python traceback: $out"; failures=$((failures + 1)); return
  fi
  if [[ $out != *"$want"* ]]; then
    echo "FAIL: $name: expected '$want' in: $out"; failures=$((failures + 1)); return
  fi
  echo "ok: $name: $out"
}
crd() { # crd FILE JSON
  printf '%s' "$2" >"$tmp/$1"
}
crd nokind.json '{"kind":"CustomResourceDefinition","metadata":{"name":"x.y"},"spec":{"group":"y","names":{"plural":"xs"},"versions":[{"name":"v1","served":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}'
expect_error "missing kind" "nokind.json: CustomResourceDefinition x.y: spec.names.kind is missing" \
  "$py" "$gen" crd --manifest "$tmp/nokind.json" --out "$tmp/o" --header x.hpp
crd badver.json '{"kind":"CustomResourceDefinition","metadata":{"name":"x.y"},"spec":{"group":"y","names":{"kind":"X","plural":"xs"},"versions":[{"name":"version1","served":true}]}}'
expect_error "bad version name" "spec.versions[].name 'version1' is not a Kubernetes version" \
  "$py" "$gen" crd --manifest "$tmp/badver.json" --out "$tmp/o" --header x.hpp
crd noschema.json '{"kind":"CustomResourceDefinition","metadata":{"name":"x.y"},"spec":{"group":"y","names":{"kind":"X","plural":"xs"},"versions":[{"name":"v1","served":true}]}}'
expect_error "no schema" "version v1 has no schema.openAPIV3Schema" \
  "$py" "$gen" crd --manifest "$tmp/noschema.json" --out "$tmp/o" --header x.hpp
crd badtype.json '{"kind":"CustomResourceDefinition","metadata":{"name":"x.y"},"spec":{"group":"y","names":{"kind":"X","plural":"xs"},"versions":[{"name":"v1","served":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"n":{"type":"decimal"}}}}}}}]}}'
expect_error "unsupported type" "openAPIV3Schema.properties.spec.properties.n: unsupported type 'decimal'" \
  "$py" "$gen" crd --manifest "$tmp/badtype.json" --out "$tmp/o" --header x.hpp
crd notcrd.json '{"kind":"ConfigMap","metadata":{"name":"c"}}'
expect_error "not a CRD" "kind is 'ConfigMap', expected CustomResourceDefinition" \
  "$py" "$gen" crd --manifest "$tmp/notcrd.json" --out "$tmp/o" --header x.hpp
printf '{"kind": ' >"$tmp/trunc.json"
expect_error "truncated JSON" "trunc.json: " "$py" "$gen" crd --manifest "$tmp/trunc.json" --out "$tmp/o" --header x.hpp
expect_error "missing file" "missing.json" "$py" "$gen" crd --manifest "$tmp/missing.json" --out "$tmp/o" --header x.hpp
mkdir "$tmp/empty"
expect_error "empty spec dir" "no OpenAPI documents" "$py" "$gen" openapi --spec "$tmp/empty" --out "$tmp/o"
printf '"just a string"' >"$tmp/str.json"
expect_error "not an object" "str.json: document 0 is not an object" \
  "$py" "$gen" crd --manifest "$tmp/str.json" --out "$tmp/o" --header x.hpp
printf 'kind: CustomResourceDefinition\nspec:\n  names: [a\n' >"$tmp/bad.yaml"
expect_error "malformed YAML" "bad.yaml: malformed YAML" "$y2j" "$tmp/bad.yaml" "$tmp/bad.json"
expect_error "missing YAML file" "nothere.yaml" "$y2j" "$tmp/nothere.yaml" "$tmp/x.json"
printf 'a: 1\n---\nb: yes\n' >"$tmp/two.yaml"
if "$y2j" "$tmp/two.yaml" "$tmp/two.json" && [[ $(cat "$tmp/two.json") == '[{"a":1},{"b":true}]' ]]; then
  echo "ok: two YAML documents become a JSON array (YAML 1.1 booleans as kubectl reads them)"
else
  echo "FAIL: two documents: $(cat "$tmp/two.json" 2>/dev/null)"; failures=$((failures + 1))
fi
if ((failures > 0)); then echo "$failures check(s) failed"; exit 1; fi
echo "all checks passed"
