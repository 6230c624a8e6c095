#!/usr/bin/env python3
"""Every path the README and docs name exists.

Checks, in README.md and docs/**/*.md:
  - relative Markdown links [text](path#anchor), resolved from the document;
  - paths in backticks that start with a top folder of this repository
    (libkube/, informer/, test/, samples/, ...), resolved from the root,
    with a trailing ":LINE" or "#anchor" dropped and globs (*) matched.
Paths under build trees and the cluster's state are not ours and are skipped.
Exits 1 and names each missing path with its document and line.
"""
import glob
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tops = sorted(
    e for e in os.listdir(root)
    if os.path.isdir(os.path.join(root, e)) and not e.startswith(".") and e not in ("build", "third_party")
) + [".ci"]
top_re = "|".join(re.escape(t) for t in tops)
tick = re.compile(r"`((?:%s)/[^`\s]*)`" % top_re)
link = re.compile(r"\]\(([^)\s]+)\)")


def exists(path):
    if any(c in path for c in "*?["):
        return bool(glob.glob(path))
    return os.path.exists(path)


def clean(p):
    p = p.split("#", 1)[0]
    p = re.sub(r":\d+(-\d+)?$", "", p)
    return p.rstrip(".,;:")


docs = subprocess.run(["git", "-C", root, "ls-files", "README.md", "docs/*.md", "docs/**/*.md"],
                      capture_output=True, text=True, check=True).stdout.split()
missing = []
for doc in docs:
    base = os.path.dirname(os.path.join(root, doc))
    in_code = False
    with open(os.path.join(root, doc), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
                continue
            if in_code:
                continue  # code blocks hold commands and snippets, not references
            for m in link.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue  # a URL, a mailto, an anchor in the same page
                p = clean(target)
                if p and not exists(os.path.normpath(os.path.join(base, p))):
                    missing.append(f"{doc}:{n}: link to {target}: no such path")
            for m in tick.finditer(line):
                p = clean(m.group(1))
                if "<" in p or "{" in p or "..." in p:
                    continue  # a pattern in prose: kube/k8s/<group>/...
                if not exists(os.path.join(root, p)):
                    missing.append(f"{doc}:{n}: `{m.group(1)}`: no such path")
for m in missing:
    print(m)
if missing:
    print(f"{len(missing)} path(s) named in the docs do not exist", file=sys.stderr)
    sys.exit(1)
print(f"check-doc-paths: every path named in {len(docs)} documents exists")
