#!/usr/bin/env python3
"""Every C++ snippet of the README and the docs, as one translation unit.

Reads the ```cpp blocks of README.md, docs/*.md and docs/guides/*.md and writes
one C++ file that the test build compiles (target doc_snippets,
test/docs/CMakeLists.txt), so that the docs cannot show code that does not
compile against today's API.

Each block names what surrounds it in an HTML comment on the line right
before its fence:

    <!-- snippet: coroutine -->
    ```cpp
    auto cm = co_await cms.async_get("settings");
    ```

The contexts are CONTEXTS below, a prefix and a suffix each; VARIABLES are
what the function-like ones provide (the client `c`, the typed client `cms`,
a sample's options `o`, ...). Types and helpers these name, and the headers,
are in test/docs/doc_snippets.hpp. A ```cpp block without a marker, or with
an unknown context, is an error: text that is not C++ takes another fence
language (```text). Each snippet goes into a namespace of its own,
doc_snippet_<n>; its #include lines move to the top of the file; #line
directives make the compiler name the Markdown file and line.

usage: doc-snippets.py [-o OUT.cpp] [--list]
  -o OUT.cpp  write the translation unit there (default: stdout); an
              unchanged file is not rewritten
  --list      print each snippet's place and context, and the contexts
Exits 1 and names each bad block with its document and line.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC_GLOBS = ("README.md", "docs/*.md", "docs/guides/*.md")
HEADER = "doc_snippets.hpp"  # test/docs/, on the target's include path

# What fragments use without declaring it, by kind of context: the members of
# a struct the function-like contexts take, bound to local references of the
# same names (so that lambdas capture them as the guides' code does).
VARIABLES = {
    # The guides' usual names.
    "common": [
        "asio::io_context& io", "const kube::client_config& config", "kube::client& c", "kube::client& client",
        "const std::string& ns", "std::ostream& out", "kube::api<ConfigMap>& cms", "kube::api<Pod>& pods",
        "kube::api<Pod>& api", "kube::request& req",
        "std::function<void(kube::error_code, kube::response)>& handler", "std::string& rv",
        "kube::list_params& params", "kube::unstructured& obj", "asio::any_io_executor& ex",
        "asio::steady_timer& cv", "bool& done", "wq::rate_limited_queue<std::string>& q",
        "std::map<std::string, int>& attempts", "int& succeeded", "ki::informer_factory& factory",
        "std::shared_ptr<ki::shared_index_informer<ConfigMap>>& configmaps",
        "std::vector<std::shared_ptr<const kube::unstructured>>& listed", "std::string& list_rv",
        "const kube::discovery_document& doc", "const std::string& server_url", "kube::diagnostics& diag",
        "const ConfigMap& cm", "kube::event_recorder& recorder", "const std::string& ours",
        "kube::finalizers::cleanup_fn& cleanup", "const kube::unstructured& deleting",
        "asio::cancellation_signal& stop", "const std::string& pod_name", "kube::log_stream& log",
        "std::string& request", "std::string& reply", "const char*& bytes", "std::size_t& n",
    ],
    # A sample's main() (samples/*/main.cpp) up to the lines a guide shows.
    "sample": [
        "const options& o", "kube::load_default_params& lp", "asio::io_context& io",
        "const kube::client_config& config", "kube::client& c", "kube::event_recorder& recorder",
        "asio::cancellation_signal& stop_recorder", "const kube::object_reference& lease_ref",
        "kube::leader_elector& elector", "ki::informer_factory& factory", "ki::informer_factory& sources",
        "kc::controller_params& co", "std::shared_ptr<ki::shared_index_informer<ConfigMap>>& target_informer",
        "kc::controller<Foo>& ctrl", "foo_controller& logic",
        "std::optional<kube::prometheus::metrics_server>& metrics_server", "const Foo& foo", "Deployment& d",
    ],
}


def bind(kind):
    """The opening of a function-like context: its variables as local references."""
    names = [re.split(r"[\s&*]", v)[-1] for v in VARIABLES[kind]]
    return "\n".join(f"auto& {n} = vars.{n};" for n in names) + "\n{"


# name: (what it is, prefix, suffix). Statements go into a block of their own,
# so that a snippet may declare a name a context already has (-Wshadow is off
# in the generated file).
CONTEXTS = {
    "file": ("namespace-scope declarations, as written", "", ""),
    "function": ("statements in a plain function", "void snippet(common_vars& vars) {\n" + bind("common"), "}\n}"),
    "coroutine": ("statements in a coroutine (asio::awaitable<void>)",
                  "asio::awaitable<void> snippet(common_vars& vars) {\n" + bind("common"), "}\nco_return;\n}"),
    "sample": ("statements of a sample program: its options o and what it declared before them",
               "void snippet(sample_vars& vars) {\n" + bind("sample"), "}\n}"),
    "foo-controller": ("members of samples/sample-controller's foo_controller",
                       "struct foo_controller : foo_controller_base {", "};"),
    "reconcile": ("statements in samples/sample-controller's reconcile (req: the request)",
                  "struct foo_controller : foo_controller_base {\n"
                  "asio::awaitable<kc::reconcile_result> reconcile(kc::reconcile_request<Foo> req) {\n{",
                  "}\nco_return kc::reconcile_result::done();\n}\n};"),
}
CPP_LANGS = ("cpp", "c++", "cxx", "cc", "h", "hpp")
FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
MARKER_RE = re.compile(r"^\s*<!--\s*snippet:\s*(\S+)\s*-->\s*$")
INCLUDE_RE = re.compile(r"^\s*#\s*include\s*[<\"]")


def documents():
    docs = []
    for pattern in DOC_GLOBS:
        docs += sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, pattern)))
    return docs


def fence(line):
    """(indent, fence, language) if line opens a fenced block (CommonMark), else None."""
    m = FENCE_RE.match(line)
    if not m or (m.group(2)[0] == "`" and "`" in m.group(3)):
        return None  # a backtick fence's info string has no backtick: ```` ```cpp ```` is inline code
    words = m.group(3).split()
    return m.group(1), m.group(2), words[0] if words else ""


def closes(line, opening):
    """line closes a block opened by the fence `opening`."""
    s = line.strip()
    return len(s) >= len(opening) and s == opening[0] * len(s)


def snippets(doc, errors):
    """(first line number, context, lines) of each C++ block of doc."""
    with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
        lines = f.read().split("\n")
    found = []
    i = 0
    while i < len(lines):
        opened = fence(lines[i])
        if not opened:
            if MARKER_RE.match(lines[i]) and not (i + 1 < len(lines) and fence(lines[i + 1])):
                errors.append(f"{doc}:{i + 1}: snippet marker not right before a ```cpp fence")
            i += 1
            continue
        indent, opening, lang = opened
        end = i + 1
        while end < len(lines) and not closes(lines[end], opening):
            end += 1
        marker = MARKER_RE.match(lines[i - 1]) if i > 0 else None
        if lang.lower() in CPP_LANGS:
            if lang != "cpp":
                errors.append(f"{doc}:{i + 1}: C++ block fenced as ```{lang}: use ```cpp")
            elif not marker:
                errors.append(f"{doc}:{i + 1}: ```cpp block without <!-- snippet: CONTEXT --> on the line before "
                              f"(contexts: {', '.join(CONTEXTS)})")
            elif marker.group(1) not in CONTEXTS:
                errors.append(f"{doc}:{i}: unknown snippet context '{marker.group(1)}' "
                              f"(contexts: {', '.join(CONTEXTS)})")
            else:
                body = [ln[len(indent):] if ln.startswith(indent) else ln.lstrip() for ln in lines[i + 1:end]]
                found.append((i + 2, marker.group(1), body))
        elif marker:
            errors.append(f"{doc}:{i}: snippet marker before a ```{lang or '(no language)'} block")
        i = end + 1
    return found


def generate(all_snippets, out_name):
    includes, seen, parts = [], set(), []
    for n, (doc, first, context, body) in enumerate(all_snippets, 1):
        _, prefix, suffix = CONTEXTS[context]
        code = []
        for k, line in enumerate(body):
            if INCLUDE_RE.match(line):
                key = line.split("//")[0].strip()
                if key not in seen:
                    seen.add(key)
                    includes += [f'#line {first + k} "{doc}"', line]
                code.append("")  # keeps the line numbers
            else:
                code.append(line)
        parts.append((n, doc, first, context, prefix, code, suffix))
    out = [
        "// Generated by scripts/doc-snippets.py from the ```cpp blocks of README.md and docs: do not edit.",
        "// Contexts: CONTEXTS in scripts/doc-snippets.py; the names they use: test/docs/" + HEADER + ".",
        "// The #line directives make g++ take the snippets for code in headers, where",
        "// their lambdas in the coroutine frames of the SDK's templates would be warned about.",
        "#if defined(__GNUC__) && !defined(__clang__)",
        '#pragma GCC diagnostic ignored "-Wsubobject-linkage"',
        "#endif",
    ]
    out += includes
    out += [
        f'#line {len(out) + 2} "{out_name}"',
        f'#include "{HEADER}"',
        "// Fragments declare what they show and contexts declare what fragments may use:",
        "// neither is an error here (the rest of the project's warnings apply).",
        '#pragma GCC diagnostic ignored "-Wunused-parameter"',
        '#pragma GCC diagnostic ignored "-Wunused-variable"',
        '#pragma GCC diagnostic ignored "-Wunused-but-set-variable"',
        '#pragma GCC diagnostic ignored "-Wunused-local-typedefs"',
        '#pragma GCC diagnostic ignored "-Wshadow"',
        "#ifdef __clang__",
        '#pragma clang diagnostic ignored "-Wunused-lambda-capture"',
        '#pragma clang diagnostic ignored "-Wunused-private-field"',
        "#endif",
        "namespace doc_context {",
    ]
    for kind, variables in VARIABLES.items():
        out.append(f"struct {kind}_vars {{")
        out += [f"  {v};" for v in variables]
        out.append("};")
    out += [
        "}  // namespace doc_context",
    ]
    for n, doc, first, context, prefix, code, suffix in parts:
        out += ["", f"namespace doc_snippet_{n} {{  // {doc}:{first}, {context}", "using namespace doc_context;"]
        if prefix:
            out += prefix.split("\n")
        out.append(f'#line {first} "{doc}"')
        out += code
        out.append(f'#line {len(out) + 2} "{out_name}"')
        if suffix:
            out += suffix.split("\n")
        out.append(f"}}  // namespace doc_snippet_{n}")
    return "\n".join(out) + "\n"


def main():
    args = sys.argv[1:]
    out_path = None
    if "-o" in args:
        out_path = args[args.index("-o") + 1]
    errors, all_snippets = [], []
    docs = documents()
    for doc in docs:
        all_snippets += [(doc, first, ctx, body) for first, ctx, body in snippets(doc, errors)]
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f"doc-snippets: {len(errors)} bad block(s)", file=sys.stderr)
        sys.exit(1)
    if "--list" in args:
        for doc, first, ctx, body in all_snippets:
            print(f"{doc}:{first}: {ctx} ({len(body)} lines)")
        print(f"{len(all_snippets)} snippets in {len(docs)} documents; contexts:")
        for name, (what, _, _) in CONTEXTS.items():
            print(f"  {name}: {what} ({sum(1 for s in all_snippets if s[2] == name)} snippets)")
        return
    text = generate(all_snippets, out_path or "doc_snippets.cpp")
    if out_path is None:
        sys.stdout.write(text)
        return
    old = None
    if os.path.exists(out_path):
        with open(out_path, encoding="utf-8") as f:
            old = f.read()
    if text != old:  # unchanged: no rebuild
        with open(out_path, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
