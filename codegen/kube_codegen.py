#!/usr/bin/env python3
"""kube-codegen: Kubernetes OpenAPI v3 documents or CRD manifests -> C++ types.

Size: one script of about 1,400 lines, so that the build runs it with a plain
python3 and no package to install; its sections follow the pipeline (load the
schemas, name and order the types, emit headers, JSON codecs, protobuf codecs,
CRD types).

Two modes:

  kube_codegen.py openapi --spec DIR --out DIR [--list]
      Every schema of the OpenAPI v3 documents in DIR (as captured by
      spec/refresh.sh) becomes a C++ struct in namespace k8s::<group>::<version>,
      declared in <OUT>/include/kube/k8s/<group>/<version>/<snake_name>.hpp, with
      JSON decode/encode defined in <OUT>/src/*.cpp, and resource_traits for
      every kind the API server serves. When DIR/proto holds the types'
      generated.proto files (spec/refresh-proto.sh), every struct whose
      protobuf message matches its schema also gets read_proto/write_proto.

  kube_codegen.py crd --manifest FILE.json --out DIR --header REL --namespace NS [--list]
      Every served version of the CustomResourceDefinition(s) in FILE (JSON: one
      CRD, a list of CRDs, or a v1 List) becomes C++ types in NS::<version>,
      declared in <OUT>/include/<REL>, defined in <OUT>/src/<stem>.cpp.

--list prints the files the run would write (one per line) and writes nothing;
CMake uses it to know the outputs at configure time. Files whose content did
not change are not rewritten, so rebuilding after a regeneration is cheap.

Python 3 standard library only. The output is stable: the same input gives
byte-identical files.
"""

import argparse
import glob
import json
import os
import re
import sys

# --------------------------------------------------------------------------
# names

CPP_KEYWORDS = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
    "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
    "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
    "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
    "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
    # names that would shadow or confuse in generated code
    "errno", "assert", "NULL", "EOF", "linux", "unix", "major", "minor",
}

# Member names the generator itself uses in structs.
RESERVED_MEMBERS = {"unknown_fields"}


def snake(name):
    """camelCase / PascalCase / acronyms -> snake_case: podIPs -> pod_ips,
    JSONSchemaProps -> json_schema_props, x-kubernetes-list-type -> x_kubernetes_list_type."""
    name = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")
    out = []
    i = 0
    n = len(name)
    while i < n:
        c = name[i]
        if c.isupper():
            j = i
            while j < n and name[j].isupper():
                j += 1
            run = name[i:j]
            rest = name[j:]
            if len(run) > 1 and rest[:1].islower() and not (rest[:1] == "s" and (len(rest) == 1 or not rest[1].islower())):
                # "HTTPHeader": the last capital starts the next word
                word, i = run[:-1], j - 1
            elif len(run) > 1 and rest[:1] == "s" and (len(rest) == 1 or not rest[1].islower()):
                # "IPs", "CIDRs": the plural s belongs to the acronym
                word, i = run + "s", j + 1
            elif len(run) == 1:
                k = j
                while k < n and (name[k].islower() or name[k].isdigit()):
                    k += 1
                word, i = name[i:k], k
            else:
                word, i = run, j
            out.append(word.lower())
        elif c == "_":
            i += 1
        else:
            k = i
            while k < n and (name[k].islower() or name[k].isdigit()):
                k += 1
            out.append(name[i:k].lower())
            i = k
    return "_".join(w for w in out if w)


def field_name(json_name):
    s = snake(json_name)
    if not s:
        s = "field"
    if s[0].isdigit():
        s = "f_" + s
    if s in CPP_KEYWORDS or s in RESERVED_MEMBERS:
        s += "_"
    return s


def pascal(name):
    parts = re.split(r"[^A-Za-z0-9]+", name)
    return "".join(p[:1].upper() + p[1:] for p in parts if p)


def cpp_string(s):
    return json.dumps(s)


def doc_comment(desc, indent):
    if not desc:
        return ""
    text = " ".join(desc.split())
    m = re.match(r"(.+?\.)(\s|$)", text)
    first = m.group(1) if m else text
    if len(first) > 240:
        first = first[:237].rstrip() + "..."
    first = first.replace("*/", "* /")
    return f"{indent}/// {first}\n"


VERSION_RE = re.compile(r"^v\d+((alpha|beta)\d+)?$")

# --------------------------------------------------------------------------
# type model


class T:
    """A C++ field type: kind in prim/special/ref/array/map/boxed."""

    def __init__(self, kind, cpp=None, ref=None, elem=None):
        self.kind, self.cpp, self.ref, self.elem = kind, cpp, ref, elem

    def spelling(self, structs):
        if self.kind in ("prim", "special"):
            return self.cpp
        if self.kind == "ref":
            return structs[self.ref].qualified
        if self.kind == "boxed":
            return f"kube::boxed<{structs[self.ref].qualified}>"
        if self.kind == "array":
            return f"std::vector<{self.elem.spelling(structs)}>"
        if self.kind == "map":
            return f"kube::string_map<{self.elem.spelling(structs)}>"
        raise AssertionError(self.kind)

    def ref_spelling(self, structs):
        return structs[self.ref].qualified

    def refs(self, direct_only=False):
        if self.kind in ("ref", "boxed"):
            return [self.ref]
        if self.kind in ("array", "map"):
            return [] if direct_only else self.elem.refs()
        return []


PRIMS = {
    "string": "std::string",
    "boolean": "bool",
    "int32": "std::int32_t",
    "int64": "std::int64_t",
    "number": "double",
}

SPECIAL_HEADERS = "kube/codec/value_types.hpp"


class Field:
    def __init__(self, json_name, cpp_name, typ, required, desc):
        self.json_name, self.cpp_name, self.type, self.required, self.desc = json_name, cpp_name, typ, required, desc


class Struct:
    def __init__(self, key, name, ns, header, desc):
        self.key = key          # schema name, unique
        self.name = name        # C++ name
        self.ns = ns            # C++ namespace "k8s::core::v1"
        self.header = header    # include path "kube/k8s/core/v1/pod.hpp"
        self.desc = desc
        self.fields = []
        self.resource = None    # dict(group, version, kind, plural, namespaced, list)
        self.accessors = False  # metadata accessors without being a resource kind
        self.group_header = None  # the header that defines it (may be shared)
        self.source = None      # the .cpp that defines its codec

    @property
    def qualified(self):
        return f"{self.ns}::{self.name}"


# --------------------------------------------------------------------------
# OpenAPI mode

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_TYPE_DOCS = {
    "apiVersion": "APIVersion defines the versioned schema of this representation of an object.",
    "kind": "Kind is a string value representing the REST resource this object represents.",
}

# Types the API server serves through content negotiation but does not publish
# in its OpenAPI documents. The metadata-only client (kube/dynamic/metadata_api.hpp)
# asks for them with `Accept: application/json;as=PartialObjectMetadata[List];
# g=meta.k8s.io;v=v1`. They are added to the spec (when absent) as
# apimachinery defines them, so their metadata is the generated ObjectMeta.
# "x-kube-metadata-accessors": emit name()/namespace_()/.../labels() as on
# resource kinds (informers key and select on them).
EXTRA_SCHEMAS = {
    _META + "PartialObjectMetadata": {
        "description": "PartialObjectMetadata is a generic representation of any object with ObjectMeta: the "
                       "server's answer when asked for metadata only.",
        "type": "object",
        "required": ["metadata"],
        "properties": {
            "apiVersion": {"type": "string", "description": _TYPE_DOCS["apiVersion"]},
            "kind": {"type": "string", "description": _TYPE_DOCS["kind"]},
            "metadata": {"description": "Standard object's metadata.", "default": {},
                         "allOf": [{"$ref": "#/components/schemas/" + _META + "ObjectMeta"}]},
        },
        "x-kube-metadata-accessors": True,
    },
    _META + "PartialObjectMetadataList": {
        "description": "PartialObjectMetadataList contains a list of objects containing only their metadata.",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string", "description": _TYPE_DOCS["apiVersion"]},
            "items": {"description": "Items contains each of the included items.", "type": "array",
                      "items": {"default": {}, "allOf": [{"$ref": "#/components/schemas/" + _META +
                                                          "PartialObjectMetadata"}]}},
            "kind": {"type": "string", "description": _TYPE_DOCS["kind"]},
            "metadata": {"description": "Standard list metadata.", "default": {},
                         "allOf": [{"$ref": "#/components/schemas/" + _META + "ListMeta"}]},
        },
    },
}

SPECIAL_SCHEMAS = {
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "kube::timestamp",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "kube::micro_timestamp",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "kube::quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "kube::int_or_string",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "kube::raw_json",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": "kube::raw_json",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch": "kube::raw_json",
}


class GenError(Exception):
    pass


def schema_namespace(key):
    parts = key.split(".")
    kind = parts[-1]
    if len(parts) >= 3 and VERSION_RE.match(parts[-2]):
        group, version = parts[-3], parts[-2]
        return kind, group, version
    return kind, parts[-2], None


def prim_type(schema, where):
    t = schema.get("type")
    fmt = schema.get("format")
    if t == "string":
        if fmt == "byte":
            return T("special", "kube::bytes")
        if fmt == "int-or-string":
            return T("special", "kube::int_or_string")
        return T("prim", "std::string")
    if t == "boolean":
        return T("prim", "bool")
    if t == "integer":
        return T("prim", "std::int32_t" if fmt == "int32" else "std::int64_t")
    if t == "number":
        return T("prim", "double")
    raise GenError(f"{where}: unsupported type {t!r}")


class OpenAPIGen:
    def __init__(self, spec_dir):
        self.schemas = {}
        self.paths = {}
        files = sorted(glob.glob(os.path.join(spec_dir, "*.json")))
        if not files:
            raise GenError(f"{spec_dir}: no OpenAPI documents (*.json)")
        for f in files:
            try:
                with open(f, encoding="utf-8") as fh:
                    doc = json.load(fh)
            except (OSError, ValueError) as e:
                raise GenError(f"{f}: {e}")
            for k, v in doc.get("components", {}).get("schemas", {}).items():
                self.schemas[k] = v
            for p, v in doc.get("paths", {}).items():
                self.paths[p] = v
        if _META + "ObjectMeta" in self.schemas:
            for k, v in EXTRA_SCHEMAS.items():
                self.schemas.setdefault(k, v)
        self.structs = {}
        self.aliases = {}  # schema key -> T for schemas that are not structs

    def ref_key(self, ref, where):
        prefix = "#/components/schemas/"
        if not ref.startswith(prefix):
            raise GenError(f"{where}: unsupported $ref {ref}")
        key = ref[len(prefix):]
        if key not in self.schemas:
            raise GenError(f"{where}: $ref to unknown schema {key}")
        return key

    def type_of(self, schema, where):
        if "$ref" in schema:
            return self.named(self.ref_key(schema["$ref"], where))
        if "allOf" in schema:
            refs = [s for s in schema["allOf"] if "$ref" in s]
            if len(refs) != 1:
                raise GenError(f"{where}: allOf without exactly one $ref")
            return self.named(self.ref_key(refs[0]["$ref"], where))
        t = schema.get("type")
        if t == "array":
            return T("array", elem=self.type_of(schema.get("items", {}), where + "[]"))
        if t == "object" or (t is None and "additionalProperties" in schema):
            addl = schema.get("additionalProperties")
            if isinstance(addl, dict):
                return T("map", elem=self.type_of(addl, where + "{}"))
            return T("special", "kube::raw_json")
        if t is None:
            return T("special", "kube::raw_json")
        return prim_type(schema, where)

    def named(self, key):
        if key in SPECIAL_SCHEMAS:
            return T("special", SPECIAL_SCHEMAS[key])
        s = self.schemas[key]
        if s.get("type") == "object" and "properties" in s:
            return T("ref", ref=key)
        if key in self.aliases:
            return self.aliases[key]
        # an object without properties, or {}: any JSON
        if s.get("type") in (None, "object") and "properties" not in s:
            return T("special", "kube::raw_json")
        return prim_type(s, key)

    def resources(self):
        found = {}
        for p, item in self.paths.items():
            if "/watch/" in p:
                continue
            for method, op in item.items():
                if not isinstance(op, dict) or op.get("x-kubernetes-action") != "list":
                    continue
                gvk = op.get("x-kubernetes-group-version-kind")
                if not gvk:
                    continue
                plural = p.rstrip("/").split("/")[-1]
                k = (gvk["group"], gvk["version"], gvk["kind"])
                r = found.setdefault(k, {"plural": plural, "namespaced": False})
                if "{namespace}" in p:
                    r["namespaced"] = True
        return found

    def build(self):
        for key, s in sorted(self.schemas.items()):
            if key in SPECIAL_SCHEMAS or s.get("type") != "object" or "properties" not in s:
                continue
            kind, group, version = schema_namespace(key)
            if version:
                ns = f"k8s::{field_name(group).rstrip('_')}::{version}"
                hdir = f"kube/k8s/{field_name(group).rstrip('_')}/{version}"
            else:
                ns = f"k8s::{field_name(group).rstrip('_')}"
                hdir = f"kube/k8s/{field_name(group).rstrip('_')}"
            self.structs[key] = Struct(key, kind, ns, f"{hdir}/{snake(kind)}.hpp", s.get("description", ""))
            self.structs[key].accessors = bool(s.get("x-kube-metadata-accessors"))
        gvk_of = {}
        for key, s in self.schemas.items():
            for g in s.get("x-kubernetes-group-version-kind", []) or []:
                gvk_of.setdefault((g["group"], g["version"], g["kind"]), key)
        for (group, version, kind), r in sorted(self.resources().items()):
            key = gvk_of.get((group, version, kind))
            if key is None or key not in self.structs:
                continue
            list_key = key + "List"
            if list_key not in self.structs:
                continue
            self.structs[key].resource = {
                "group": group, "version": version, "kind": kind, "plural": r["plural"],
                "namespaced": r["namespaced"], "list": list_key,
            }
        for key, st in self.structs.items():
            s = self.schemas[key]
            required = set(s.get("required", []))
            seen = set()
            for pname, pschema in s["properties"].items():
                cname = field_name(pname)
                if cname in seen:
                    raise GenError(f"{key}: two properties map to the C++ member {cname}")
                seen.add(cname)
                typ = self.type_of(pschema, f"{key}.{pname}")
                req = pname in required
                if st.resource and pname == "metadata":
                    req = True  # resource kinds always carry metadata
                st.fields.append(Field(pname, cname, typ, req, pschema.get("description", "")))
        return self.structs


# --------------------------------------------------------------------------
# CRD mode


class CRDGen:
    def __init__(self, manifest, namespace):
        try:
            with open(manifest, encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as e:
            raise GenError(f"{manifest}: {e}")
        self.manifest = manifest
        if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List"):
            doc = doc.get("items")
        crds = doc if isinstance(doc, list) else [doc]
        for i, c in enumerate(crds):
            if not isinstance(c, dict):
                raise GenError(f"{manifest}: document {i} is not an object")
        self.crds = crds
        if not self.crds:
            raise GenError(f"{manifest}: no CustomResourceDefinition in the manifest")
        self.namespace = namespace
        self.structs = {}

    def build(self, header):
        for i, crd in enumerate(self.crds):
            where = f"{self.manifest}: document {i}"
            if crd.get("kind") != "CustomResourceDefinition":
                raise GenError(f"{where}: kind is {crd.get('kind')!r}, expected CustomResourceDefinition")
            spec = crd.get("spec")
            if not isinstance(spec, dict):
                raise GenError(f"{where}: spec is missing")
            name = crd.get("metadata", {}).get("name", "?")
            where = f"{self.manifest}: CustomResourceDefinition {name}"
            names = spec.get("names") or {}
            kind = names.get("kind")
            plural = names.get("plural")
            group = spec.get("group")
            for fld, val in (("spec.names.kind", kind), ("spec.names.plural", plural), ("spec.group", group)):
                if not isinstance(val, str) or not val:
                    raise GenError(f"{where}: {fld} is missing")
            list_kind = names.get("listKind") or kind + "List"
            scope = spec.get("scope", "Namespaced")
            if scope not in ("Namespaced", "Cluster"):
                raise GenError(f"{where}: spec.scope is {scope!r}, expected Namespaced or Cluster")
            versions = spec.get("versions")
            if not isinstance(versions, list) or not versions:
                raise GenError(f"{where}: spec.versions is missing")
            ns_root = self.namespace or re.sub(r"[^a-z0-9_]", "_", group.split(".")[0].lower())
            for v in versions:
                vname = v.get("name")
                if not isinstance(vname, str) or not VERSION_RE.match(vname):
                    raise GenError(f"{where}: spec.versions[].name {vname!r} is not a Kubernetes version")
                if not v.get("served", False):
                    continue
                schema = (v.get("schema") or {}).get("openAPIV3Schema")
                if not isinstance(schema, dict):
                    raise GenError(f"{where}: version {vname} has no schema.openAPIV3Schema")
                ns = f"{ns_root}::{vname}"
                self.vwhere = f"{where} version {vname}"
                root = self.object_struct(f"{ns}::{kind}", kind, ns, header, schema, "openAPIV3Schema", root=True)
                root.resource = {
                    "group": group, "version": vname, "kind": kind, "plural": plural,
                    "namespaced": scope == "Namespaced", "list": f"{ns}::{list_kind}",
                }
                lst = Struct(f"{ns}::{list_kind}", list_kind, ns, header, f"{list_kind} is a list of {kind}.")
                lst.fields = [
                    Field("apiVersion", "api_version", T("prim", "std::string"), False, ""),
                    Field("items", "items", T("array", elem=T("ref", ref=root.key)), True, ""),
                    Field("kind", "kind", T("prim", "std::string"), False, ""),
                    Field("metadata", "metadata", T("ref", ref="meta::ListMeta"), False, ""),
                ]
                self.structs[lst.key] = lst
        return self.structs

    def object_struct(self, key, name, ns, header, schema, where, root=False):
        if key in self.structs:
            raise GenError(f"{self.vwhere}: two schemas would both be named {name} (at {where})")
        st = Struct(key, name, ns, header, schema.get("description", ""))
        self.structs[key] = st
        required = set(schema.get("required", []))
        props = schema.get("properties", {})
        if not isinstance(props, dict):
            raise GenError(f"{self.vwhere}: {where}.properties is not an object")
        if root:
            props = dict(props)
            props.setdefault("apiVersion", {"type": "string"})
            props.setdefault("kind", {"type": "string"})
            props.setdefault("metadata", {"type": "object"})  # always ObjectMeta, declared or not
        seen = set()
        for pname in sorted(props):
            p = props[pname]
            cname = field_name(pname)
            if cname in seen:
                raise GenError(f"{self.vwhere}: {where}: two properties map to the C++ member {cname}")
            seen.add(cname)
            if root and pname == "metadata":
                st.fields.append(Field(pname, cname, T("ref", ref="meta::ObjectMeta"), True, ""))
                continue
            typ = self.type_of(p, f"{where}.properties.{pname}", name + pascal(pname), ns, header)
            st.fields.append(Field(pname, cname, typ, pname in required, p.get("description", "")))
        return st

    def type_of(self, p, where, suggested, ns, header):
        if not isinstance(p, dict):
            raise GenError(f"{self.vwhere}: {where} is not a schema object")
        if p.get("x-kubernetes-int-or-string"):
            return T("special", "kube::int_or_string")
        t = p.get("type")
        if t == "object" or (t is None and ("properties" in p or "additionalProperties" in p)):
            if "properties" in p and p["properties"]:
                return T("ref", ref=self.object_struct(f"{ns}::{suggested}", suggested, ns, header, p, where).key)
            addl = p.get("additionalProperties")
            if isinstance(addl, dict):
                return T("map", elem=self.type_of(addl, where + ".additionalProperties", suggested + "Value", ns, header))
            return T("special", "kube::raw_json")
        if t == "array":
            items = p.get("items")
            if not isinstance(items, dict):
                return T("special", "kube::raw_json")
            return T("array", elem=self.type_of(items, where + ".items", suggested + "Item", ns, header))
        if t is None:
            return T("special", "kube::raw_json")
        if t == "string":
            return T("prim", "std::string")  # date-time/byte kept as text: the server stores what was sent
        if t == "boolean":
            return T("prim", "bool")
        if t == "integer":
            return T("prim", "std::int32_t" if p.get("format") == "int32" else "std::int64_t")
        if t == "number":
            return T("prim", "double")
        raise GenError(f"{self.vwhere}: {where}: unsupported type {t!r}")


# --------------------------------------------------------------------------
# protobuf (the built-in types' generated.proto files, pinned by
# spec/refresh-proto.sh, matched to the OpenAPI structs)

PROTO_FIELD_RE = re.compile(r"^\s*(optional|repeated)\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)\s*;")
PROTO_MAP_RE = re.compile(r"^\s*map<\s*string\s*,\s*([\w.]+)\s*>\s+(\w+)\s*=\s*(\d+)\s*;")
PROTO_MESSAGE_RE = re.compile(r"^message (\w+) \{")
PROTO_SCALARS = {"string", "bytes", "bool", "int32", "int64", "double"}
# C++ leaf type -> the protobuf scalar it is read from
PRIM_PROTO = {"std::string": "string", "bool": "bool", "std::int32_t": "int32", "std::int64_t": "int64",
              "double": "double", "kube::bytes": "bytes"}
# C++ special type -> the apimachinery message it is read from
SPECIAL_PROTO = {
    "kube::timestamp": {"io.k8s.apimachinery.pkg.apis.meta.v1.Time"},
    "kube::micro_timestamp": {"io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"},
    "kube::quantity": {"io.k8s.apimachinery.pkg.api.resource.Quantity"},
    "kube::int_or_string": {"io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
}


def proto_key(package, name):
    """k8s.io.api.core.v1 + Pod -> io.k8s.api.core.v1.Pod, the OpenAPI schema name."""
    parts = package.split(".")
    return ".".join([parts[1], parts[0]] + [p.replace("_", "-") for p in parts[2:]] + [name])


class PField:
    def __init__(self, name, number, label, typ):
        self.name, self.number, self.label, self.type = name, number, label, typ  # label: optional/repeated/map


class ProtoSchema:
    """The messages of the .proto files under DIR, keyed like OpenAPI schemas,
    and DIR/go-fields.json (which Go fields are pointers)."""

    def __init__(self, proto_dir):
        self.messages = {}
        files = sorted(glob.glob(os.path.join(proto_dir, "**", "*.proto"), recursive=True))
        if not files:
            raise GenError(f"{proto_dir}: no .proto files (run codegen/spec/refresh-proto.sh)")
        raw = []
        for f in files:
            with open(f, encoding="utf-8") as fh:
                text = fh.read()
            m = re.search(r"^package ([\w.]+);", text, re.M)
            if not m:
                raise GenError(f"{f}: no package line")
            package = m.group(1)
            cur = None
            for n, line in enumerate(text.split("\n"), 1):
                if line.lstrip().startswith("//"):
                    continue
                mm = PROTO_MESSAGE_RE.match(line)
                if mm:
                    cur = proto_key(package, mm.group(1))
                    self.messages[cur] = {}
                    continue
                if cur is None:
                    continue
                if line.startswith("}"):
                    cur = None
                    continue
                fm = PROTO_FIELD_RE.match(line)
                mp = PROTO_MAP_RE.match(line)
                if fm:
                    label, typ, name, num = fm.groups()
                elif mp:
                    label, (typ, name, num) = "map", mp.groups()
                elif line.strip():
                    raise GenError(f"{f}:{n}: not understood: {line.strip()}")
                else:
                    continue
                raw.append((f, n, cur, package, PField(name, int(num), label, typ)))
        for f, n, cur, package, pf in raw:
            pf.type = self.resolve(pf.type, package, f"{f}:{n}")
            self.messages[cur][pf.name] = pf
        go_path = os.path.join(proto_dir, "go-fields.json")
        try:
            with open(go_path, encoding="utf-8") as fh:
                go = json.load(fh)
        except (OSError, ValueError) as e:
            raise GenError(f"{go_path}: {e}")
        self.go = {}
        for k, fields in go.items():
            pkg, _, name = k.rpartition(".")
            self.go[proto_key(pkg, name)] = fields

    def resolve(self, typ, package, where):
        if typ in PROTO_SCALARS:
            return typ
        if typ.startswith("."):
            pkg, _, name = typ[1:].rpartition(".")
            key = proto_key(pkg, name)
        else:
            key = proto_key(package, typ)
        if key not in self.messages:
            raise GenError(f"{where}: unknown message {typ}")
        return key

    def zero_omitted(self, msg, pname):
        """Whether the Go field behind msg.pname writes its zero to protobuf
        while JSON omits it: a value field (not a pointer) tagged omitempty.
        A field without omitempty writes its zero both ways."""
        info = self.go.get(msg, {}).get(pname, {})
        return not info.get("pointer", True) and info.get("omitempty", False)

    def items_of(self, typ):
        """The element type of a wrapper message {repeated X items = 1} (metav1.Verbs, ExtraValue), else None."""
        fields = self.messages.get(typ)
        if fields and len(fields) == 1 and "items" in fields:
            f = fields["items"]
            if f.number == 1 and f.label == "repeated":
                return f.type
        return None

    def raw_bytes(self, typ):
        """A message that carries JSON as bytes in field 1 (RawExtension, FieldsV1, apiextensions JSON), or Patch."""
        fields = self.messages.get(typ)
        if fields is None:
            return False
        if not fields:
            return True
        return len(fields) == 1 and next(iter(fields.values())).number == 1 and \
            next(iter(fields.values())).type == "bytes"


class ProtoMismatch(Exception):
    pass


def proto_json_names(proto, msg):
    """JSON member name -> the protobuf fields that lead to it from msg: one,
    or more when Go embeds a struct that JSON inlines and protobuf nests
    (Probe's exec is handler.exec)."""
    fields = proto.messages[msg]
    go = proto.go.get(msg)
    out = {}
    for pname, pf in fields.items():
        info = (go.get(pname) or go.get(f"#{pf.number}")) if go else None
        if info is None:
            out[pname] = [pf]
        elif info["json"]:
            out[info["json"]] = [pf]
        elif pf.label == "optional" and pf.type in proto.messages:
            for j, path in proto_json_names(proto, pf.type).items():
                out[j] = [pf] + path
    return out


class ProtoEntry:
    """One protobuf field of a struct's message: a member read and written
    `how` (natural/nonzero/items/map_items), or an inlined message (`inline`:
    the entries of its fields)."""

    def __init__(self, pf, field=None, how=None, inline=None):
        self.pf, self.field, self.how, self.inline = pf, field, how, inline


def proto_fields(entries):
    """The entries that read a member, those of inlined messages included."""
    for e in entries:
        if e.inline is not None:
            yield from proto_fields(e.inline)
        else:
            yield e


def proto_plan(proto, structs, key):
    """The ProtoEntry list of structs[key]; raises ProtoMismatch when the
    OpenAPI and protobuf shapes differ."""
    if key not in proto.messages:
        raise ProtoMismatch(f"no protobuf message {key}")
    names = proto_json_names(proto, key)
    top = []
    for f in structs[key].fields:
        path = names.get(f.json_name)
        if path is None:
            if f.json_name in ("apiVersion", "kind"):
                continue  # carried by the envelope (runtime.Unknown's typeMeta)
            raise ProtoMismatch(f"{key}.{f.json_name}: no protobuf field")
        pf = path[-1]
        owner = path[-2].type if len(path) > 1 else key
        how = proto_match(proto, f.type, pf, f"{key}.{f.json_name}")
        if how == "natural" and not f.required and f.type.kind in ("prim", "special") and \
                f.type.cpp in PRIM_PROTO and proto.zero_omitted(owner, pf.name):
            how = "nonzero"  # a Go value field: its zero is written to protobuf, omitted from JSON
        entries = top
        for outer in path[:-1]:
            e = next((x for x in entries if x.inline is not None and x.pf is outer), None)
            if e is None:
                e = ProtoEntry(outer, inline=[])
                entries.append(e)
            entries = e.inline
        entries.append(ProtoEntry(pf, f, how))
    return top


def proto_match(proto, t, pf, where):
    def leaf(t, typ):
        if t.kind == "prim" or (t.kind == "special" and t.cpp in PRIM_PROTO):
            return PRIM_PROTO.get(t.cpp) == typ
        if t.kind == "special":
            if t.cpp == "kube::raw_json":
                return typ not in PROTO_SCALARS and proto.raw_bytes(typ)
            return typ in SPECIAL_PROTO.get(t.cpp, ())
        if t.kind in ("ref", "boxed"):
            return typ == t.ref
        return False

    if pf.label == "optional":
        if leaf(t, pf.type):
            return "natural"
        if t.kind == "array" and proto.items_of(pf.type) and leaf(t.elem, proto.items_of(pf.type)):
            return "items"
    elif pf.label == "repeated":
        if t.kind == "array" and leaf(t.elem, pf.type):
            return "natural"
    elif pf.label == "map" and t.kind == "map":
        if leaf(t.elem, pf.type):
            return "natural"
        if t.elem.kind == "array" and proto.items_of(pf.type) and leaf(t.elem.elem, proto.items_of(pf.type)):
            return "map_items"
    raise ProtoMismatch(f"{where}: OpenAPI {t.kind} {t.cpp or t.ref or ''} vs protobuf {pf.label} {pf.type}")


# --------------------------------------------------------------------------
# emission


def sccs(nodes, edges):
    """Tarjan's strongly connected components; returns a list of lists."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


class Emitter:
    def __init__(self, structs, external=None):
        self.structs = structs            # key -> Struct (emitted)
        self.external = external or {}    # key -> Struct (defined elsewhere, e.g. meta types for CRDs)
        self.all = dict(self.external)
        self.all.update(structs)
        self.proto = {}                   # key -> ProtoEntry list, for the structs with a protobuf codec
        self.comp_of = {}                 # key -> its strongly connected component (box_cycles)

    def plan_protobuf(self, proto):
        """The structs whose fields all match their protobuf message, and
        whose member structs do too, get a protobuf codec (self.proto); the
        others stay JSON only."""
        plans = {}
        for key in self.structs:
            try:
                plans[key] = proto_plan(proto, self.structs, key)
            except ProtoMismatch:
                pass
        changed = True
        while changed:
            changed = False
            for key in sorted(plans):
                if any(r not in plans for f in self.structs[key].fields for r in f.type.refs()):
                    del plans[key]
                    changed = True
        self.proto = plans

    def box_cycles(self):
        edges = {k: set(r for f in s.fields for r in f.type.refs() if r in self.structs) for k, s in self.structs.items()}
        comps = sccs(self.structs.keys(), edges)
        comp_of = self.comp_of
        for c in comps:
            for k in c:
                comp_of[k] = tuple(c)
        for k, s in self.structs.items():
            for f in s.fields:
                if f.type.kind == "ref" and f.type.ref in self.structs and comp_of[f.type.ref] == comp_of[k]:
                    f.type = T("boxed", ref=f.type.ref)
        return comps

    def header_groups(self, comps, shared_header=None):
        """Structs that must share a header: an SCC, and a List with its kind."""
        parent = {k: k for k in self.structs}

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        def union(a, b):
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)

        for c in comps:
            for k in c[1:]:
                union(c[0], k)
        for k, s in self.structs.items():
            if s.resource and s.resource["list"] in self.structs:
                union(k, s.resource["list"])
        if shared_header:
            keys = sorted(self.structs)
            for k in keys[1:]:
                union(keys[0], k)
        groups = {}
        for k in self.structs:
            groups.setdefault(find(k), []).append(k)
        for root, members in groups.items():
            # the defining header: the resource kind's, else the first name
            res = [m for m in members if self.structs[m].resource]
            primary = self.structs[sorted(res)[0] if res else sorted(members)[0]]
            hdr = shared_header or primary.header
            for m in members:
                self.structs[m].group_header = hdr
        return groups

    def order(self, members):
        """Definition order inside one header: a struct after the structs it
        holds, by value or in a container (clang with libstdc++ instantiates
        std::optional<std::vector<X>>'s destructor where the member is
        declared, so X must be complete there; g++ waits). Within a cycle
        only by-value members (required fields) order; the others are boxed
        or recursive containers."""
        keys = set(members)
        held = {k: set(r for f in self.structs[k].fields for r in f.type.refs() if r in keys and r != k)
                for k in members}
        comp_of = {}
        for c in sccs(members, held):
            for k in c:
                comp_of[k] = tuple(c)
        deps = {k: set(r for f in self.structs[k].fields for r in f.type.refs()
                       if r in keys and r != k and (comp_of[r] != comp_of[k] or
                                                   (f.type.kind == "ref" and f.required))) for k in members}
        out, done = [], set()

        def visit(k, stack):
            if k in done:
                return
            if k in stack:
                raise GenError(f"{self.structs[k].name}: a by-value cycle that boxing did not break")
            stack.add(k)
            for d in sorted(deps[k]):
                visit(d, stack)
            stack.discard(k)
            done.add(k)
            out.append(k)

        for k in sorted(members):
            visit(k, set())
        return out

    def includes_for(self, members):
        inc = set()
        for k in members:
            for f in self.structs[k].fields:
                for r in f.type.refs():
                    st = self.all[r]
                    hdr = st.group_header or st.header
                    if hdr != self.structs[k].group_header:
                        inc.add(hdr)
            if self.structs[k].resource:
                pass
        return sorted(inc)

    def emit_struct(self, s, out):
        out.append(doc_comment(s.desc, ""))
        out.append(f"struct {s.name} {{\n")
        for f in s.fields:
            typ = f.type.spelling(self.all)
            if not f.required and f.type.kind in ("ref", "boxed"):
                # optional objects live on the heap (Go uses pointers): an
                # inline std::optional reserves the full size of absent fields
                typ = f"kube::heap_optional<{f.type.ref_spelling(self.all)}>"
            elif not f.required:
                typ = f"std::optional<{typ}>"
            out.append(doc_comment(f.desc, "  "))
            # A container of a struct of this struct's own cycle
            # (JSONSchemaProps.properties) gets no `{}`: clang with
            # libstdc++ checks, while the struct is still incomplete, whether
            # it is default-constructible to pick that member's initializer,
            # caches "no", and later refuses to construct the struct in a
            # container. Its default constructor (empty) is what `{}` gave.
            recursive = f.type.kind != "ref" and any(self.comp_of.get(r) == self.comp_of.get(s.key)
                                                      for r in f.type.refs() if r in self.structs)
            init = "" if recursive else "{}"
            out.append(f"  {typ} {f.cpp_name}{init};\n")
        out.append("  /// JSON members this type has no field for; written back on encode.\n")
        out.append("  kube::unknown_fields unknown_fields;\n")
        if s.resource or s.accessors:
            names = {f.cpp_name for f in s.fields}
            meta = next((f for f in s.fields if f.json_name == "metadata"), None)
            if meta and meta.required and meta.type.kind == "ref":
                out.append("\n  // Accessors the informer's key functions use.\n")
                for acc, member in (("name", "name"), ("namespace_", "namespace_"),
                                    ("resource_version", "resource_version"), ("uid", "uid")):
                    if acc in names:
                        continue
                    out.append(f"  [[nodiscard]] std::string_view {acc}() const noexcept {{\n"
                               f"    return metadata.{member} ? std::string_view(*metadata.{member}) : std::string_view{{}};\n"
                               f"  }}\n")
                if "labels" not in names:
                    out.append("  /// metadata.labels, or an empty map (listers match label selectors on it).\n"
                               "  [[nodiscard]] const kube::string_map<std::string>& labels() const noexcept {\n"
                               "    static const kube::string_map<std::string> none;\n"
                               "    return metadata.labels ? *metadata.labels : none;\n"
                               "  }\n")
        out.append("};\n\n")
        out.append(f"void decode(const boost::json::value& in, {s.name}& out, const kube::json_path& at);\n")
        out.append(f"void encode(const {s.name}& in, boost::json::value& out);\n")
        out.append(f"void read_json(kube::codec::json_reader& in, {s.name}& out, const kube::json_path& at);\n")
        if s.key in self.proto:
            out.append(f"void read_proto(kube::codec::proto_reader& in, {s.name}& out, const kube::json_path& at);\n")
            out.append(f"void write_proto(const {s.name}& in, kube::codec::proto_writer& out);\n")
        out.append("\n")

    def emit_traits(self, s, out):
        r = s.resource
        api_version = f"{r['group']}/{r['version']}" if r["group"] else r["version"]
        lst = self.all[r["list"]]
        out.append(f"template <>\nstruct kube::resource_traits<{s.qualified}> {{\n")
        out.append(f"  static constexpr std::string_view group = {cpp_string(r['group'])};\n")
        out.append(f"  static constexpr std::string_view version = {cpp_string(r['version'])};\n")
        out.append(f"  static constexpr std::string_view api_version = {cpp_string(api_version)};\n")
        out.append(f"  static constexpr std::string_view kind = {cpp_string(r['kind'])};\n")
        out.append(f"  static constexpr std::string_view plural = {cpp_string(r['plural'])};\n")
        out.append(f"  static constexpr bool namespaced = {'true' if r['namespaced'] else 'false'};\n")
        out.append(f"  using list_type = {lst.qualified};\n")
        out.append("};\n\n")

    def header_text(self, hdr, members, note):
        out = [f"// Generated by kube-codegen from {note}. Do not edit.\n", "#pragma once\n\n"]
        out.append(f"#include <kube/codec/codec.hpp>\n#include <kube/typed/resource.hpp>\n#include <{SPECIAL_HEADERS}>\n")
        for inc in self.includes_for(members):
            out.append(f"#include <{inc}>\n")
        out.append("\n#include <cstdint>\n#include <optional>\n#include <string>\n"
                   "#include <string_view>\n#include <vector>\n\n")
        ordered = self.order(members)
        by_ns = []
        for k in ordered:
            s = self.structs[k]
            if not by_ns or by_ns[-1][0] != s.ns:
                by_ns.append((s.ns, []))
            by_ns[-1][1].append(s)
        # forward declarations (containers of structs defined later in this header)
        fwd = {}
        for k in ordered:
            fwd.setdefault(self.structs[k].ns, []).append(self.structs[k].name)
        for ns, names in fwd.items():
            out.append(f"namespace {ns} {{\n")
            for n in names:
                out.append(f"struct {n};\n")
            out.append(f"}} // namespace {ns}\n\n")
        for ns, structs in by_ns:
            out.append(f"namespace {ns} {{\n\n")
            for s in structs:
                self.emit_struct(s, out)
            out.append(f"}} // namespace {ns}\n\n")
        for k in ordered:
            if self.structs[k].resource:
                self.emit_traits(self.structs[k], out)
        return "".join(out)

    @staticmethod
    def member_switch(s, out, call):
        """The members' dispatch on the key k: a switch on its length, then
        comparisons; `call` formats one field's decode (given f)."""
        by_len = {}
        for f in s.fields:
            by_len.setdefault(len(f.json_name.encode()), []).append(f)
        if not by_len:
            return
        out.append("    switch (k.size()) {\n")
        for n in sorted(by_len):
            out.append(f"      case {n}:\n")
            for f in by_len[n]:
                out.append(f"        if (k == {cpp_string(f.json_name)}) {{\n"
                           f"          {call(f)};\n"
                           f"          continue;\n        }}\n")
            out.append("        break;\n")
        out.append("      default:\n        break;\n    }\n")

    def decode_fn(self, s, out):
        out.append(f"void decode(const boost::json::value& in, {s.name}& out, const kube::json_path& at) {{\n")
        out.append("  const auto& o = kube::codec::expect_object(in, at);\n")
        out.append("  for (const auto& kv : o) {\n")
        out.append("    const std::string_view k(kv.key().data(), kv.key().size());\n")
        out.append("    const kube::json_path here{&at, k};\n")
        self.member_switch(s, out, lambda f: f"kube::codec::decode_into(kv.value(), out.{f.cpp_name}, here)")
        out.append("    kube::codec::keep_unknown(out.unknown_fields, k, kv.value());\n")
        out.append("  }\n}\n\n")

    def read_fn(self, s, out):
        # decode_fn's dispatch, pulling the members from the text (json_reader)
        out.append(f"void read_json(kube::codec::json_reader& in, {s.name}& out, const kube::json_path& at) {{\n")
        out.append("  kube::codec::expect_object(in, at);\n")
        out.append("  std::string_view k;\n")
        out.append("  while (in.next_key(k)) {\n")
        out.append("    const kube::json_path here{&at, k};\n")
        self.member_switch(s, out, lambda f: f"kube::codec::read_into(in, out.{f.cpp_name}, here)")
        out.append("    out.unknown_fields.set(k, in.value());\n")
        out.append("  }\n}\n\n")

    def encode_fn(self, s, out):
        out.append(f"void encode(const {s.name}& in, boost::json::value& out) {{\n")
        out.append("  auto& o = out.emplace_object();\n")
        out.append(f"  o.reserve({len(s.fields)} + in.unknown_fields.size());\n")
        for f in s.fields:
            out.append(f"  kube::codec::put(o, {cpp_string(f.json_name)}, in.{f.cpp_name});\n")
        out.append("  kube::codec::put_unknown(o, in.unknown_fields);\n}\n\n")

    PROTO_READ = {"natural": "read", "nonzero": "read_nonzero", "items": "read_items", "map_items": "read_map_items"}
    PROTO_WRITE = {"natural": "write", "nonzero": "write", "items": "write_items", "map_items": "write_map_items"}

    def proto_switch(self, entries, rd, out, ind, depth):
        """The dispatch on the field number of reader `rd`; `continue`s for
        the fields it reads, breaks out of the switch for the others."""
        out.append(f"{ind}switch ({rd}.tag()) {{\n")
        for e in sorted(entries, key=lambda e: e.pf.number):
            out.append(f"{ind}  case {e.pf.number}: {{\n")
            if e.inline is not None:
                # a Go struct JSON inlines and protobuf nests; its unknown fields are skipped
                sub = f"sub{depth}"
                out.append(f"{ind}    auto {sub} = {rd}.message(at);\n{ind}    while ({sub}.next()) {{\n")
                self.proto_switch(e.inline, sub, out, ind + "      ", depth + 1)
                out.append(f"{ind}      {sub}.skip();\n{ind}    }}\n")
            else:
                fn = self.PROTO_READ[e.how]
                out.append(f"{ind}    kube::codec::pb::{fn}({rd}, out.{e.field.cpp_name}, "
                           f"kube::json_path{{&at, {cpp_string(e.field.json_name)}}});\n")
            out.append(f"{ind}    continue;\n{ind}  }}\n")
        out.append(f"{ind}  default:\n{ind}    break;\n{ind}}}\n")

    def read_proto_fn(self, s, out):
        plan = self.proto[s.key]
        out.append(f"void read_proto(kube::codec::proto_reader& in, {s.name}& out, const kube::json_path& at) {{\n")
        if not plan:
            out.append("  (void)at;\n")
        out.append("  for (const char* field = in.position(); in.next(); field = in.position()) {\n")
        if plan:
            self.proto_switch(plan, "in", out, "    ", 0)
        out.append("    in.keep_unknown(field, out.unknown_fields);\n  }\n")
        for f in self.proto_arrays(plan):
            out.append(f"  kube::codec::pb::fit(out.{f.cpp_name});\n")
        out.append("}\n\n")

    @staticmethod
    def proto_arrays(entries):
        """The list and map members among `entries` (inlined ones
        included): fit() after the fields are read."""
        return [e.field for e in proto_fields(entries) if e.field.type.kind in ("array", "map")]

    def proto_writes(self, entries, w, out, ind, depth):
        for e in sorted(entries, key=lambda e: e.pf.number):
            if e.inline is not None:
                sub = f"sub{depth}"
                out.append(f"{ind}{{\n{ind}  kube::codec::proto_writer {sub}({w}, {e.pf.number});\n")
                self.proto_writes(e.inline, sub, out, ind + "  ", depth + 1)
                out.append(f"{ind}}}\n")
            else:
                fn = self.PROTO_WRITE[e.how]
                out.append(f"{ind}kube::codec::pb::{fn}({w}, {e.pf.number}, in.{e.field.cpp_name});\n")

    def write_proto_fn(self, s, out):
        out.append(f"void write_proto(const {s.name}& in, kube::codec::proto_writer& out) {{\n")
        self.proto_writes(self.proto[s.key], "out", out, "  ", 0)
        out.append("  out.put_unknown(in.unknown_fields);\n}\n\n")

    def source_text(self, keys, note):
        out = [f"// Generated by kube-codegen from {note}. Do not edit.\n"]
        hdrs = sorted(set(self.structs[k].group_header for k in keys))
        for h in hdrs:
            out.append(f"#include <{h}>\n")
        out.append("\n#include <kube/codec/codec_impl.hpp>\n")
        if any(k in self.proto for k in keys):
            out.append("#include <kube/codec/proto_impl.hpp>\n")
        out.append("\n")
        cur = None
        for k in keys:
            s = self.structs[k]
            if s.ns != cur:
                if cur:
                    out.append(f"}} // namespace {cur}\n\n")
                out.append(f"namespace {s.ns} {{\n\n")
                cur = s.ns
            self.decode_fn(s, out)
            self.read_fn(s, out)
            self.encode_fn(s, out)
            if k in self.proto:
                self.read_proto_fn(s, out)
                self.write_proto_fn(s, out)
        if cur:
            out.append(f"}} // namespace {cur}\n")
        return "".join(out)


def write_files(files, out_dir, list_only):
    if list_only:
        for rel in sorted(files):
            print(os.path.join(out_dir, rel))
        return
    for rel, text in sorted(files.items()):
        path = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            with open(path, encoding="utf-8") as fh:
                if fh.read() == text:
                    continue
        except OSError:
            pass
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)


def gen_openapi(args):
    g = OpenAPIGen(args.spec)
    structs = g.build()
    em = Emitter(structs)
    comps = em.box_cycles()
    proto_dir = os.path.join(args.spec, "proto")
    if os.path.isdir(proto_dir):
        em.plan_protobuf(ProtoSchema(proto_dir))
    groups = em.header_groups(comps)
    note = "the Kubernetes OpenAPI v3 documents in codegen/spec"
    files = {}
    for root, members in sorted(groups.items()):
        hdr = structs[members[0]].group_header
        files["include/" + hdr] = em.header_text(hdr, members, note)
    # alias headers for members defined in another struct's header
    for k, s in sorted(structs.items()):
        if s.header != s.group_header:
            files["include/" + s.header] = (f"// Generated by kube-codegen. Do not edit.\n#pragma once\n\n"
                                            f"// {s.name} is defined together with related types in:\n"
                                            f"#include <{s.group_header}>\n")
    # sources: per namespace, in chunks
    by_ns = {}
    for k, s in sorted(structs.items(), key=lambda kv: (kv[1].ns, kv[1].name)):
        by_ns.setdefault(s.ns, []).append(k)
    chunk = args.chunk
    for ns, keys in sorted(by_ns.items()):
        base = ns.replace("k8s::", "").replace("::", "_")
        for i in range(0, len(keys), chunk):
            part = keys[i:i + chunk]
            files[f"src/{base}_{i // chunk}.cpp"] = em.source_text(part, note)
    write_files(files, args.out, args.list)


def gen_crd(args):
    g = CRDGen(args.manifest, args.namespace)
    structs = g.build(args.header)
    # the meta types CRDs use live in the generated k8s::meta::v1 headers
    meta = {
        "meta::ObjectMeta": Struct("meta::ObjectMeta", "ObjectMeta", "k8s::meta::v1", "kube/k8s/meta/v1/object_meta.hpp", ""),
        "meta::ListMeta": Struct("meta::ListMeta", "ListMeta", "k8s::meta::v1", "kube/k8s/meta/v1/list_meta.hpp", ""),
    }
    em = Emitter(structs, meta)
    comps = em.box_cycles()
    em.header_groups(comps, shared_header=args.header)
    note = os.path.basename(args.manifest)
    stem = re.sub(r"[^A-Za-z0-9_]", "_", os.path.splitext(os.path.basename(args.header))[0])
    files = {
        "include/" + args.header: em.header_text(args.header, list(structs), note),
        f"src/{stem}.cpp": em.source_text([k for k in structs], note),
    }
    write_files(files, args.out, args.list)


def sample_value(g, schema, where, depth, counter, key=None):
    """A JSON value that fits `schema`, with every property filled in."""
    counter[0] += 1
    n = counter[0]
    if "$ref" in schema or "allOf" in schema:
        ref = schema["$ref"] if "$ref" in schema else [x for x in schema["allOf"] if "$ref" in x][0]["$ref"]
        key = g.ref_key(ref, where)
        special = SPECIAL_SCHEMAS.get(key)
        if special == "kube::timestamp":
            return "2024-05-%02dT10:%02d:07Z" % (1 + n % 28, n % 60)
        if special == "kube::micro_timestamp":
            return "2024-05-%02dT10:%02d:07.%06dZ" % (1 + n % 28, n % 60, n % 1000000)
        if special == "kube::quantity":
            return ["1500m", "2Gi", "1e3", "0.5", "128974848"][n % 5]
        if special == "kube::int_or_string":
            return 8080 if n % 2 else "25%"
        if special == "kube::raw_json":
            return {"raw": [1, "two", {"three": 3.5}, True]}
        return sample_value(g, g.schemas[key], key, depth, counter, key)
    t = schema.get("type")
    if t == "object" and "properties" in schema:
        out = {}
        required = list(schema.get("required", []))
        if key in g.structs and g.structs[key].resource:
            required.append("metadata")  # resource kinds always carry it (see OpenAPIGen.build)
        for pname, p in schema["properties"].items():
            # deep down, only what is required (keeps recursive schemas finite)
            if depth > 2 and pname not in required and ("$ref" in p or "allOf" in p or depth > 4):
                continue
            out[pname] = sample_value(g, p, where + "." + pname, depth + 1, counter)
        out["zzUnknownField"] = {"kept": [n, "x"]}
        return out
    if t == "array":
        return [sample_value(g, schema.get("items", {}), where + "[]", depth + 1, counter)]
    if t == "object" or "additionalProperties" in schema:
        addl = schema.get("additionalProperties")
        if isinstance(addl, dict):
            return {"key-%d" % n: sample_value(g, addl, where + "{}", depth + 1, counter)}
        return {"any": {"json": [n]}}
    if t is None:
        return {"any": [n, None, "v"]}
    if t == "string":
        if schema.get("format") == "byte":
            return ["aGVsbG8=", "AAEC/w==", ""][n % 3]
        if schema.get("format") == "int-or-string":
            return 443 if n % 2 else "http"
        return "value-%d" % n
    if t == "boolean":
        return n % 2 == 0
    if t == "integer":
        return n if schema.get("format") == "int32" else 1099511627776 + n
    if t == "number":
        return n + 0.25
    raise GenError(f"{where}: unsupported type {t!r}")


def proto_expected(em, key, value):
    """What a sample of structs[key] reads back as after a protobuf write and
    read: no unknown JSON members, no apiVersion/kind where the envelope
    carries them, and a Go value field's zero absent."""
    if not isinstance(value, dict):
        return value
    by_json = {e.field.json_name: e for e in proto_fields(em.proto[key])}
    out = {}
    for f in em.structs[key].fields:
        if f.json_name not in value or f.json_name not in by_json:
            continue
        v = value[f.json_name]
        if by_json[f.json_name].how == "nonzero" and v in ("", 0, False) and not isinstance(v, float):
            continue
        out[f.json_name] = proto_expected_type(em, f.type, v)
    return out


def proto_expected_type(em, t, v):
    if t.kind in ("ref", "boxed"):
        return proto_expected(em, t.ref, v)
    if t.kind == "array" and isinstance(v, list):
        return [proto_expected_type(em, t.elem, x) for x in v]
    if t.kind == "map" and isinstance(v, dict):
        return {k: proto_expected_type(em, t.elem, x) for k, x in v.items()}
    return v


def gen_roundtrip(args):
    """Test support: a sample document for every schema, what it reads back
    as through protobuf, and a C++ registry mapping schema names (and
    group/version/kind) to the generated codecs."""
    g = OpenAPIGen(args.spec)
    structs = g.build()
    em = Emitter(structs)
    em.header_groups(em.box_cycles())
    proto_dir = os.path.join(args.spec, "proto")
    if os.path.isdir(proto_dir):
        em.plan_protobuf(ProtoSchema(proto_dir))
    samples = {}
    proto_samples = {}
    for key in sorted(structs):
        samples[key] = sample_value(g, g.schemas[key], key, 0, [0], key)
        if key in em.proto:
            proto_samples[key] = proto_expected(em, key, samples[key])
    gvk_of = {}
    for key in structs:
        for x in g.schemas[key].get("x-kubernetes-group-version-kind", []) or []:
            gvk_of.setdefault(key, []).append(x)
    out = ["// Generated by kube-codegen (roundtrip). Do not edit.\n", '#include "roundtrip_registry.hpp"\n\n']
    for h in sorted(set(s.group_header for s in structs.values())):
        out.append(f"#include <{h}>\n")
    out.append("\nconst std::vector<roundtrip_entry>& roundtrip_registry() {\n")
    out.append("  static const std::vector<roundtrip_entry> entries{\n")
    for key in sorted(structs):
        q = structs[key].qualified
        gvks = gvk_of.get(key) or [{"group": "", "version": "", "kind": ""}]
        if key in em.proto:
            pb = f"&kube::codec::read_proto_erased<{q}>, &kube::codec::write_proto_erased<{q}>"
        else:
            pb = "nullptr, nullptr"
        for x in gvks:
            out.append(f"      {{{cpp_string(key)}, {cpp_string(x['group'])}, {cpp_string(x['version'])}, "
                       f"{cpp_string(x['kind'])}, &kube::codec::decode_erased<{q}>, &kube::codec::read_erased<{q}>, "
                       f"&kube::codec::encode_erased<{q}>, {pb}, [] {{ return std::make_shared<{q}>(); }}}},\n")
    out.append("  };\n  return entries;\n}\n")
    files = {"roundtrip_registry.cpp": "".join(out),
             "samples.json": json.dumps(samples, indent=1, sort_keys=True) + "\n",
             "proto_samples.json": json.dumps(proto_samples, indent=1, sort_keys=True) + "\n"}
    write_files(files, args.out, args.list)


def main(argv):
    ap = argparse.ArgumentParser(prog="kube-codegen", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    a = sub.add_parser("openapi")
    a.add_argument("--spec", required=True)
    a.add_argument("--out", required=True)
    a.add_argument("--chunk", type=int, default=48, help="structs per generated source file")
    a.add_argument("--list", action="store_true")
    c = sub.add_parser("crd")
    c.add_argument("--manifest", required=True, help="the CRD manifest as JSON (kube-yaml2json converts YAML)")
    c.add_argument("--out", required=True)
    c.add_argument("--header", required=True, help="include path of the generated header, e.g. foo/v1.hpp")
    c.add_argument("--namespace", default="", help="C++ namespace (default: the group's first label)")
    c.add_argument("--list", action="store_true")
    r = sub.add_parser("roundtrip", help="test support: samples for every schema and a codec registry")
    r.add_argument("--spec", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    try:
        if args.mode == "openapi":
            gen_openapi(args)
        elif args.mode == "roundtrip":
            gen_roundtrip(args)
        else:
            gen_crd(args)
    except GenError as e:
        print(f"kube-codegen: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
