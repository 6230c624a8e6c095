#!/usr/bin/env python3
"""Pins the protobuf schema of the built-in types next to the OpenAPI documents.

    codegen/spec/refresh_proto.py OUT_DIR MODULE=DIR ...

MODULE=DIR pairs name a Go module and its directory in the module cache
(refresh-proto.sh finds them with `go list -m`). For every package whose
types the OpenAPI documents in OUT_DIR/.. describe, copies the package's
generated.proto to OUT_DIR/<module>/<package path>/generated.proto, byte for
byte, and writes OUT_DIR/go-fields.json: for every Go struct field that has a
protobuf tag, its protobuf name and number, its JSON name ("" when the field
is an embedded struct whose members JSON inlines), whether the Go field is a
pointer and whether its JSON tag says omitempty. The .proto files give field
numbers and types; the table answers what they cannot: which JSON member a
protobuf field is (names differ: "uid" is "uID", "$ref" is "ref"; inlined
structs are a nested message in protobuf), and whether a zero is written (a Go
value field, not a pointer, is written to protobuf even when zero, while its
JSON form omits it, so the generated reader treats that zero as absent and
reads the same object from either wire format). Python 3 standard library only.
"""

import glob
import json
import os
import re
import shutil
import sys

# Imported by the others, though no OpenAPI schema lives there.
ALSO = {("k8s.io/apimachinery", "pkg/runtime/schema")}

STRUCT_RE = re.compile(r"^type (\w+) struct \{\s*$")
FIELD_RE = re.compile(r"^\s*(\w+)\s+(\S+)\s+`([^`]*)`")
EMBED_RE = re.compile(r"^\s*(\*?[\w.]+)\s+`([^`]*)`")
TAG_RE = re.compile(r'(\w+):"([^"]*)"')


def proto_package(module, pkg):
    """k8s.io/api + core/v1 -> k8s.io.api.core.v1 (as go-to-protobuf names it)."""
    return (module + "/" + pkg).replace("/", ".").replace("-", "_")


def openapi_prefix(module, pkg):
    """k8s.io/api + core/v1 -> io.k8s.api.core.v1 (the OpenAPI schema names)."""
    host, _, rest = module.partition("/")
    return ".".join(reversed(host.split("."))) + "." + (rest + "/" + pkg).replace("/", ".")


def go_fields(pkg_dir):
    out = {}
    for path in sorted(glob.glob(os.path.join(pkg_dir, "*.go"))):
        base = os.path.basename(path)
        if base.endswith("_test.go") or base.startswith("zz_generated") or base == "generated.pb.go":
            continue
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        struct = None
        for line in lines:
            if struct is None:
                m = STRUCT_RE.match(line)
                if m:
                    struct = m.group(1)
                continue
            if line.startswith("}"):
                struct = None
                continue
            m = FIELD_RE.match(line)
            e = None if m else EMBED_RE.match(line)
            if not m and not e:
                continue
            go_type, tag_text = (m.group(2), m.group(3)) if m else (e.group(1), e.group(2))
            tags = dict(TAG_RE.findall(tag_text))
            pb = tags.get("protobuf")
            if not pb:
                continue
            parts = pb.split(",")
            if len(parts) < 2 or not parts[1].isdigit():
                continue
            # the protobuf name, or "#<number>" when the tag has none (EphemeralContainerCommon)
            name = next((p[5:] for p in parts if p.startswith("name=")), "#" + parts[1])
            json_tag = tags.get("json", "").split(",")
            out.setdefault(struct, {})[name] = {
                "number": int(parts[1]),
                "json": json_tag[0],  # "" for an embedded struct whose fields are inlined
                "pointer": go_type.startswith("*"),
                "omitempty": "omitempty" in json_tag[1:],
            }
    return out


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = argv[0]
    modules = dict(a.split("=", 1) for a in argv[1:])
    spec_dir = os.path.dirname(os.path.abspath(out_dir))
    prefixes = set()
    for f in glob.glob(os.path.join(spec_dir, "*.json")):
        with open(f, encoding="utf-8") as fh:
            doc = json.load(fh)
        for key in doc.get("components", {}).get("schemas", {}):
            prefixes.add(key.rsplit(".", 1)[0])
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    table = {}
    copied = []
    for module, mdir in sorted(modules.items()):
        for proto in sorted(glob.glob(os.path.join(mdir, "**", "generated.proto"), recursive=True)):
            pkg = os.path.relpath(os.path.dirname(proto), mdir)
            if openapi_prefix(module, pkg) not in prefixes and (module, pkg) not in ALSO:
                continue
            dest = os.path.join(out_dir, module, pkg, "generated.proto")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(proto, dest)
            copied.append(os.path.relpath(dest, out_dir))
            for struct, fields in go_fields(os.path.dirname(proto)).items():
                table[proto_package(module, pkg) + "." + struct] = fields
    with open(os.path.join(out_dir, "go-fields.json"), "w", encoding="utf-8") as fh:
        json.dump(table, fh, indent=0, sort_keys=True)
        fh.write("\n")
    print(f"refresh_proto: copied {len(copied)} .proto files and the fields of {len(table)} Go structs to {out_dir}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
