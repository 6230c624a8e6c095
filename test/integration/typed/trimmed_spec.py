#!/usr/bin/env python3
"""Test support: a copy of the pinned spec cut down to one kind, with one of
its fields removed, so that types generated from it meet a field they do not
know on the real cluster.

    trimmed_spec.py SPEC_DIR OUT_DIR SCHEMA FIELD

Writes OUT_DIR/spec.json (the schemas SCHEMA and SCHEMA + "List" refer to,
transitively, and the paths that serve them) without SCHEMA's property FIELD,
and OUT_DIR/proto (a link to SPEC_DIR/proto). Python 3 standard library only.
"""

import glob
import json
import os
import sys


def refs(node, out):
    if isinstance(node, dict):
        r = node.get("$ref")
        if isinstance(r, str) and r.startswith("#/components/schemas/"):
            out.add(r[len("#/components/schemas/"):])
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)


def main(argv):
    spec_dir, out_dir, schema, field = argv
    schemas, paths = {}, {}
    for f in sorted(glob.glob(os.path.join(spec_dir, "*.json"))):
        with open(f, encoding="utf-8") as fh:
            doc = json.load(fh)
        schemas.update(doc.get("components", {}).get("schemas", {}))
        paths.update(doc.get("paths", {}))
    keep, todo = set(), [schema, schema + "List"]
    while todo:
        k = todo.pop()
        if k in keep:
            continue
        keep.add(k)
        found = set()
        refs(schemas[k], found)
        todo.extend(found - keep)
    kept = {k: json.loads(json.dumps(schemas[k])) for k in sorted(keep)}
    props = kept[schema].get("properties", {})
    if field not in props:
        print(f"trimmed_spec: {schema} has no property {field}", file=sys.stderr)
        return 1
    del props[field]
    kind = schema.rsplit(".", 1)[1]
    served = {p: v for p, v in paths.items()
              if any(isinstance(op, dict) and (op.get("x-kubernetes-group-version-kind") or {}).get("kind") in
                     (kind, kind + "List") for op in v.values())}
    os.makedirs(out_dir, exist_ok=True)
    text = json.dumps({"components": {"schemas": kept}, "paths": served}, indent=1, sort_keys=True) + "\n"
    target = os.path.join(out_dir, "spec.json")
    try:
        with open(target, encoding="utf-8") as fh:
            if fh.read() == text:
                text = None
    except OSError:
        pass
    if text is not None:
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(text)
    link = os.path.join(out_dir, "proto")
    if not os.path.islink(link):
        os.symlink(os.path.abspath(os.path.join(spec_dir, "proto")), link)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
