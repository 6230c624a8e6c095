#!/usr/bin/env python3
"""The dependencies between the SDK's parts (folders), from #include lines.

usage: scripts/folder-deps.py [--dot] [--check [--allow A:B,...]]

A part is a concept folder: libkube/{include/kube,src}/<concept>/, the
informer, the controller runtime, the workqueue, the base. A file of
libkube/include/kube/detail/ belongs to the part it serves (DETAIL_PARTS), a
file at the top of libkube/{include/kube,src}/ to "core". Prints each edge
"a -> b (n includes)", then the two-way pairs. --check exits 1 if there is
a two-way pair other than those --allow lists (each A:B, either order: the
pairs known and not yet untied, so that no new one appears); --dot prints a
Graphviz graph instead.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE_DIRS = {
    "libkube/include": None,
    "libkube/base/include": None,
    "informer/include": None,
    "informer/controller/include": None,
    "workqueue/include": None,
    "prometheus/include": None,
}
# libkube/include/kube/detail/<file>: the part each internal header serves.
DETAIL_PARTS = {
    "buffers.hpp": "transport",
    "config_files.hpp": "config",
    "default_options.hpp": "typed",
    "gzip.hpp": "transport",
    "initiate.hpp": "core",
    "list_decoder.hpp": "typed",
    "spawn.hpp": "core",
    "transport_params.hpp": "config",
    "typed_core.hpp": "typed",
    "watch_decoder.hpp": "watch",
}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def part_of(path):
    """The part of a repository-relative path, or None (not ours)."""
    p = path.split("/")
    if p[0] == "workqueue":
        return "workqueue"
    if p[0] == "prometheus":
        return "prometheus"
    if p[0] == "informer":
        return "controller" if len(p) > 1 and p[1] == "controller" else "informer"
    if p[:2] == ["libkube", "base"]:
        return "base"
    if p[0] != "libkube":
        return None
    rest = p[3:] if p[1] == "include" else p[2:]  # after include/kube/ or src/
    if len(rest) == 1:
        return "core"
    if rest[0] == "detail":
        return DETAIL_PARTS.get(rest[1], "detail:" + rest[1])
    if rest[0] == "k8s":  # kube/k8s/*.hpp: the generated types
        return "codec"
    return rest[0]


def resolve(includer, kind, name):
    if kind == '"':
        for base in (os.path.dirname(includer), "libkube/src"):
            cand = os.path.normpath(os.path.join(base, name))
            if os.path.exists(os.path.join(ROOT, cand)):
                return cand
    for d in INCLUDE_DIRS:
        cand = os.path.join(d, name)
        if os.path.exists(os.path.join(ROOT, cand)):
            return cand
    return None  # the standard library, Boost, generated headers


def main():
    edges = {}
    for top in ("libkube", "informer", "workqueue", "prometheus"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if not f.endswith((".hpp", ".cpp")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), ROOT)
                a = part_of(rel)
                if a is None:
                    continue
                with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
                    text = fh.read()
                for kind, name in INCLUDE_RE.findall(text):
                    target = resolve(rel, kind, name)
                    b = part_of(target) if target else None
                    if b and b != a:
                        edges[(a, b)] = edges.get((a, b), 0) + 1
    two_way = sorted({tuple(sorted(e)) for e in edges if (e[1], e[0]) in edges})
    if "--dot" in sys.argv:
        print("digraph parts {")
        for (a, b), n in sorted(edges.items()):
            style = ' [color=red]' if tuple(sorted((a, b))) in two_way else ""
            print(f'  "{a}" -> "{b}"{style};')
        print("}")
    else:
        for (a, b), n in sorted(edges.items()):
            print(f"{a} -> {b} ({n})")
        print("two-way pairs:", ", ".join(f"{a} <-> {b}" for a, b in two_way) or "none")
    if "--check" in sys.argv:
        allowed = set()
        if "--allow" in sys.argv:
            for pair in sys.argv[sys.argv.index("--allow") + 1].split(","):
                allowed.add(tuple(sorted(pair.split(":"))))
        new = [p for p in two_way if p not in allowed]
        if new:
            print("folder-deps: new two-way dependencies: " + ", ".join(f"{a} <-> {b}" for a, b in new), file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
