#include <kube/discovery/discovery_document.hpp>

#include "codec/json_dom_parser.hpp"
#include "codec/parse_json.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

namespace kube {
namespace json = boost::json;

namespace {

// Names where we are in the document, for messages.
class decoder {
public:
  decoder(std::string_view source, std::string_view doc_kind, diagnostics& diag)
      : source_(source),
        doc_kind_(doc_kind),
        diag_(diag) {}

  error_code fail(std::string_view path, const std::string& what) const {
    std::string m = "discovery: ";
    m += source_;
    m += ": ";
    m += doc_kind_;
    if (!path.empty()) {
      m += ": ";
      m += path;
    }
    m += ": ";
    m += what;
    diag_.set_client_message(std::move(m));
    return client_errc::decode_error;
  }

  // The body as a JSON object; byte offset on a syntax error.
  error_code parse_object(std::string_view body, json::object& out) const {
    detail::json_dom_parser p;
    error_code ec;
    const std::size_t n = p.write(body.data(), body.size(), ec);
    if (ec)
      return fail("", "not valid JSON (byte offset " + std::to_string(n) + " of " + std::to_string(body.size()) +
                          "): " + ec.message());
    json::value v = p.release();
    if (detail::json_has_non_finite(v)) return fail("", "a number too large for a double");
    if (!v.is_object()) return fail("", std::string("expected a JSON object, got ") + type_name(v));
    out = std::move(v.as_object());
    return {};
  }

  static const char* type_name(const json::value& v) {
    switch (v.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "a boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      return "a number";
    case json::kind::string:
      return "a string";
    case json::kind::array:
      return "an array";
    case json::kind::object:
      return "an object";
    }
    return "?";
  }

  static std::string at(std::string_view path, std::string_view key) {
    std::string p(path);
    if (!p.empty()) p += '.';
    p += key;
    return p;
  }
  static std::string at(std::string_view path, std::size_t i) {
    return std::string(path) + "[" + std::to_string(i) + "]";
  }

  // A string field; absent or null gives "" unless required.
  error_code string_field(const json::object& o, std::string_view key, std::string_view path, std::string& out,
                          bool required) const {
    const auto* v = o.if_contains(key);
    if (!v || v->is_null()) {
      if (required) return fail(at(path, key), "missing required field");
      out.clear();
      return {};
    }
    if (!v->is_string()) return fail(at(path, key), std::string("expected a string, got ") + type_name(*v));
    out.assign(v->as_string().data(), v->as_string().size());
    if (required && out.empty()) return fail(at(path, key), "must not be empty");
    return {};
  }

  error_code bool_field(const json::object& o, std::string_view key, std::string_view path, bool& out) const {
    const auto* v = o.if_contains(key);
    if (!v || v->is_null()) {
      out = false;
      return {};
    }
    if (!v->is_bool()) return fail(at(path, key), std::string("expected a boolean, got ") + type_name(*v));
    out = v->as_bool();
    return {};
  }

  // An optional array field; absent or null gives nullptr.
  error_code array_field(const json::object& o, std::string_view key, std::string_view path,
                         const json::array*& out) const {
    out = nullptr;
    const auto* v = o.if_contains(key);
    if (!v || v->is_null()) return {};
    if (!v->is_array()) return fail(at(path, key), std::string("expected an array, got ") + type_name(*v));
    out = &v->as_array();
    return {};
  }

  error_code object_field(const json::object& o, std::string_view key, std::string_view path,
                          const json::object*& out) const {
    out = nullptr;
    const auto* v = o.if_contains(key);
    if (!v || v->is_null()) return {};
    if (!v->is_object()) return fail(at(path, key), std::string("expected an object, got ") + type_name(*v));
    out = &v->as_object();
    return {};
  }

  error_code string_array_field(const json::object& o, std::string_view key, std::string_view path,
                                std::vector<std::string>& out) const {
    out.clear();
    const json::array* a = nullptr;
    if (auto ec = array_field(o, key, path, a)) return ec;
    if (!a) return {};
    out.reserve(a->size());
    for (std::size_t i = 0; i < a->size(); ++i) {
      const auto& e = (*a)[i];
      if (!e.is_string()) return fail(at(at(path, key), i), std::string("expected a string, got ") + type_name(e));
      out.emplace_back(e.as_string().data(), e.as_string().size());
    }
    return {};
  }

  error_code element_object(const json::array& a, std::size_t i, std::string_view path,
                            const json::object*& out) const {
    if (!a[i].is_object()) return fail(at(path, i), std::string("expected an object, got ") + type_name(a[i]));
    out = &a[i].as_object();
    return {};
  }

  // `kind` must be `expected` when present (legacy documents) or always (aggregated).
  error_code check_kind(const json::object& o, std::string_view expected, bool required) const {
    std::string k;
    if (auto ec = string_field(o, "kind", "", k, required)) return ec;
    if (!k.empty() && k != expected)
      return fail("kind", "expected \"" + std::string(expected) + "\", got \"" + k + "\"");
    return {};
  }

private:
  std::string_view source_;
  std::string_view doc_kind_;
  diagnostics& diag_;
};

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return r;
}

// A responseKind object; false if absent or empty (the resource is then skipped).
error_code response_kind(const decoder& d, const json::object& o, std::string_view path, const group_version& served,
                         group_version_kind& out, bool& present) {
  present = false;
  const json::object* rk = nullptr;
  const auto rk_path = decoder::at(path, "responseKind");
  if (auto ec = d.object_field(o, "responseKind", path, rk)) return ec;
  if (!rk) return {};
  if (auto ec = d.string_field(*rk, "group", rk_path, out.group, false)) return ec;
  if (auto ec = d.string_field(*rk, "version", rk_path, out.version, false)) return ec;
  if (auto ec = d.string_field(*rk, "kind", rk_path, out.kind, false)) return ec;
  if (out.kind.empty()) return {};
  // An empty group/version means "the one this resource is served at".
  if (out.version.empty()) {
    out.group = served.group;
    out.version = served.version;
  }
  present = true;
  return {};
}

error_code aggregated_resource(const decoder& d, const json::object& o, std::string_view path, const group_version& gv,
                               std::vector<api_resource>& out) {
  api_resource r;
  r.group = gv.group;
  r.version = gv.version;
  if (auto ec = d.string_field(o, "resource", path, r.plural, true)) return ec;
  group_version_kind rk;
  bool has_kind = false;
  if (auto ec = response_kind(d, o, path, gv, rk, has_kind)) return ec;
  std::string scope;
  if (auto ec = d.string_field(o, "scope", path, scope, true)) return ec;
  if (scope == "Namespaced")
    r.namespaced = true;
  else if (scope != "Cluster")
    return d.fail(decoder::at(path, "scope"), "expected \"Namespaced\" or \"Cluster\", got \"" + scope + "\"");
  if (auto ec = d.string_field(o, "singularResource", path, r.singular, false)) return ec;
  if (auto ec = d.string_array_field(o, "verbs", path, r.verbs)) return ec;
  if (auto ec = d.string_array_field(o, "shortNames", path, r.short_names)) return ec;
  if (auto ec = d.string_array_field(o, "categories", path, r.categories)) return ec;
  const json::array* subs = nullptr;
  if (auto ec = d.array_field(o, "subresources", path, subs)) return ec;
  if (subs) {
    const auto subs_path = decoder::at(path, "subresources");
    for (std::size_t i = 0; i < subs->size(); ++i) {
      const json::object* so = nullptr;
      if (auto ec = d.element_object(*subs, i, subs_path, so)) return ec;
      const auto sp = decoder::at(subs_path, i);
      api_subresource s;
      if (auto ec = d.string_field(*so, "subresource", sp, s.name, true)) return ec;
      bool sub_has_kind = false;
      if (auto ec = response_kind(d, *so, sp, gv, s.response_kind, sub_has_kind)) return ec;
      if (auto ec = d.string_array_field(*so, "verbs", sp, s.verbs)) return ec;
      if (sub_has_kind) r.subresources.push_back(std::move(s));  // client-go drops those without a kind
    }
  }
  if (!has_kind) return {};  // client-go: "discovery resource missing GVK", skipped
  r.kind = rk.kind;
  if (r.singular.empty()) r.singular = lower(r.kind);
  out.push_back(std::move(r));
  return {};
}

}  // namespace

const api_group* discovery_document::find_group(std::string_view name) const {
  for (const auto& g : groups)
    if (g.name == name) return &g;
  return nullptr;
}

const std::vector<api_resource>* discovery_document::resources_of(const group_version& gv) const {
  const auto* g = find_group(gv.group);
  if (!g) return nullptr;
  const auto* v = g->find_version(gv.version);
  return v ? &v->resources : nullptr;
}

bool discovery_document::complete() const {
  for (const auto& g : groups)
    for (const auto& v : g.versions)
      if (v.failure) return false;
  return true;
}

error_code discovery_document::parse_aggregated(std::string_view body, std::string_view source,
                                                std::vector<api_group>& out, diagnostics& diag) {
  const decoder d(source, "APIGroupDiscoveryList", diag);
  json::object top;
  if (auto ec = d.parse_object(body, top)) return ec;
  if (auto ec = d.check_kind(top, "APIGroupDiscoveryList", true)) return ec;
  std::string api_version;
  if (auto ec = d.string_field(top, "apiVersion", "", api_version, true)) return ec;
  if (api_version != "apidiscovery.k8s.io/v2" && api_version != "apidiscovery.k8s.io/v2beta1")
    return d.fail("apiVersion", "unsupported version \"" + api_version + "\" (want apidiscovery.k8s.io/v2 or v2beta1)");
  const json::array* items = nullptr;
  if (auto ec = d.array_field(top, "items", "", items)) return ec;
  std::vector<api_group> groups;
  for (std::size_t i = 0; items && i < items->size(); ++i) {
    const json::object* item = nullptr;
    if (auto ec = d.element_object(*items, i, "items", item)) return ec;
    const auto ip = decoder::at("items", i);
    api_group g;
    const json::object* meta = nullptr;
    if (auto ec = d.object_field(*item, "metadata", ip, meta)) return ec;
    if (meta)
      if (auto ec = d.string_field(*meta, "name", decoder::at(ip, "metadata"), g.name, false)) return ec;
    const json::array* versions = nullptr;
    if (auto ec = d.array_field(*item, "versions", ip, versions)) return ec;
    const auto vsp = decoder::at(ip, "versions");
    for (std::size_t j = 0; versions && j < versions->size(); ++j) {
      const json::object* vo = nullptr;
      if (auto ec = d.element_object(*versions, j, vsp, vo)) return ec;
      const auto vp = decoder::at(vsp, j);
      api_group::version_entry v;
      if (auto ec = d.string_field(*vo, "version", vp, v.version, true)) return ec;
      std::string freshness;
      if (auto ec = d.string_field(*vo, "freshness", vp, freshness, false)) return ec;
      if (freshness == "Stale") {
        // client-go reports a stale group/version as failed and uses the rest.
        v.failure = api_errc::service_unavailable;
        g.versions.push_back(std::move(v));
        continue;
      }
      const json::array* resources = nullptr;
      if (auto ec = d.array_field(*vo, "resources", vp, resources)) return ec;
      const auto rsp = decoder::at(vp, "resources");
      const group_version gv{g.name, v.version};
      for (std::size_t k = 0; resources && k < resources->size(); ++k) {
        const json::object* ro = nullptr;
        if (auto ec = d.element_object(*resources, k, rsp, ro)) return ec;
        if (auto ec = aggregated_resource(d, *ro, decoder::at(rsp, k), gv, v.resources)) return ec;
      }
      if (g.preferred_version.empty()) g.preferred_version = v.version;  // the first fresh one
      g.versions.push_back(std::move(v));
    }
    groups.push_back(std::move(g));
  }
  for (auto& g : groups) out.push_back(std::move(g));
  return {};
}

error_code discovery_document::parse_api_versions(std::string_view body, std::string_view source,
                                                  std::vector<std::string>& out, diagnostics& diag) {
  const decoder d(source, "APIVersions", diag);
  json::object top;
  if (auto ec = d.parse_object(body, top)) return ec;
  if (auto ec = d.check_kind(top, "APIVersions", false)) return ec;
  if (!top.contains("versions")) return d.fail("versions", "missing required field");
  std::vector<std::string> versions;
  if (auto ec = d.string_array_field(top, "versions", "", versions)) return ec;
  for (std::size_t i = 0; i < versions.size(); ++i)
    if (versions[i].empty() || versions[i].find('/') != std::string::npos)
      return d.fail(decoder::at("versions", i), "not a version: \"" + versions[i] + "\"");
  out = std::move(versions);
  return {};
}

error_code discovery_document::parse_group_list(std::string_view body, std::string_view source,
                                                std::vector<api_group>& out, diagnostics& diag) {
  const decoder d(source, "APIGroupList", diag);
  json::object top;
  if (auto ec = d.parse_object(body, top)) return ec;
  if (auto ec = d.check_kind(top, "APIGroupList", false)) return ec;
  const json::array* list = nullptr;
  if (auto ec = d.array_field(top, "groups", "", list)) return ec;
  std::vector<api_group> groups;
  for (std::size_t i = 0; list && i < list->size(); ++i) {
    const json::object* go = nullptr;
    if (auto ec = d.element_object(*list, i, "groups", go)) return ec;
    const auto gp = decoder::at("groups", i);
    api_group g;
    if (auto ec = d.string_field(*go, "name", gp, g.name, true)) return ec;
    const json::array* versions = nullptr;
    if (auto ec = d.array_field(*go, "versions", gp, versions)) return ec;
    const auto vsp = decoder::at(gp, "versions");
    for (std::size_t j = 0; versions && j < versions->size(); ++j) {
      const json::object* vo = nullptr;
      if (auto ec = d.element_object(*versions, j, vsp, vo)) return ec;
      api_group::version_entry v;
      if (auto ec = d.string_field(*vo, "version", decoder::at(vsp, j), v.version, true)) return ec;
      g.versions.push_back(std::move(v));
    }
    const json::object* pref = nullptr;
    if (auto ec = d.object_field(*go, "preferredVersion", gp, pref)) return ec;
    if (pref)
      if (auto ec = d.string_field(*pref, "version", decoder::at(gp, "preferredVersion"), g.preferred_version, false))
        return ec;
    if (g.preferred_version.empty() && !g.versions.empty()) g.preferred_version = g.versions.front().version;
    groups.push_back(std::move(g));
  }
  for (auto& g : groups) out.push_back(std::move(g));
  return {};
}

error_code discovery_document::parse_resource_list(std::string_view body, std::string_view source,
                                                   const group_version& expected, std::vector<api_resource>& out,
                                                   diagnostics& diag) {
  const decoder d(source, "APIResourceList", diag);
  json::object top;
  if (auto ec = d.parse_object(body, top)) return ec;
  if (auto ec = d.check_kind(top, "APIResourceList", false)) return ec;
  std::string gv_text;
  if (auto ec = d.string_field(top, "groupVersion", "", gv_text, true)) return ec;
  const auto gv = group_version::parse(gv_text);
  if (!gv) return d.fail("groupVersion", "not a group/version: \"" + gv_text + "\"");
  if (*gv != expected) return d.fail("groupVersion", "expected \"" + expected.str() + "\", got \"" + gv_text + "\"");
  const json::array* list = nullptr;
  if (auto ec = d.array_field(top, "resources", "", list)) return ec;

  std::vector<api_resource> resources;
  std::vector<std::pair<std::string, api_subresource>> subs;  // (parent plural, subresource)
  for (std::size_t i = 0; list && i < list->size(); ++i) {
    const json::object* ro = nullptr;
    if (auto ec = d.element_object(*list, i, "resources", ro)) return ec;
    const auto rp = decoder::at("resources", i);
    std::string name, kind, group, version, singular;
    bool namespaced = false;
    std::vector<std::string> verbs;
    if (auto ec = d.string_field(*ro, "name", rp, name, true)) return ec;
    if (auto ec = d.string_field(*ro, "kind", rp, kind, true)) return ec;
    if (auto ec = d.string_field(*ro, "group", rp, group, false)) return ec;
    if (auto ec = d.string_field(*ro, "version", rp, version, false)) return ec;
    if (auto ec = d.string_field(*ro, "singularName", rp, singular, false)) return ec;
    if (auto ec = d.bool_field(*ro, "namespaced", rp, namespaced)) return ec;
    if (auto ec = d.string_array_field(*ro, "verbs", rp, verbs)) return ec;
    if (const auto slash = name.find('/'); slash != std::string::npos) {
      api_subresource s;
      s.name = name.substr(slash + 1);
      s.response_kind =
          version.empty() ? group_version_kind{gv->group, gv->version, kind} : group_version_kind{group, version, kind};
      s.verbs = std::move(verbs);
      subs.emplace_back(name.substr(0, slash), std::move(s));
      continue;
    }
    api_resource r;
    r.group = gv->group;
    r.version = gv->version;
    r.kind = std::move(kind);
    r.plural = std::move(name);
    r.singular = singular.empty() ? lower(r.kind) : std::move(singular);
    r.namespaced = namespaced;
    r.verbs = std::move(verbs);
    if (auto ec = d.string_array_field(*ro, "shortNames", rp, r.short_names)) return ec;
    if (auto ec = d.string_array_field(*ro, "categories", rp, r.categories)) return ec;
    resources.push_back(std::move(r));
  }
  // Subresources may be listed before or after their parent; one without a
  // parent has nothing to attach to and is dropped.
  for (auto& [parent, s] : subs)
    for (auto& r : resources)
      if (r.plural == parent) {
        r.subresources.push_back(std::move(s));
        break;
      }
  out = std::move(resources);
  return {};
}

namespace {
json::array strings(const std::vector<std::string>& v) {
  json::array a;
  a.reserve(v.size());
  for (const auto& s : v) a.emplace_back(s);
  return a;
}
json::object kind_json(const group_version_kind& k) {
  return {{"group", k.group}, {"version", k.version}, {"kind", k.kind}};
}
}  // namespace

std::string discovery_document::to_json() const {
  json::array items;
  for (const auto& g : groups) {
    json::array versions;
    for (const auto& v : g.versions) {
      json::object vo{{"version", v.version}};
      json::array resources;
      for (const auto& r : v.resources) {
        json::object ro{{"resource", r.plural},
                        {"responseKind", kind_json(r.gvk())},
                        {"scope", r.namespaced ? "Namespaced" : "Cluster"},
                        {"singularResource", r.singular},
                        {"verbs", strings(r.verbs)}};
        if (!r.short_names.empty()) ro["shortNames"] = strings(r.short_names);
        if (!r.categories.empty()) ro["categories"] = strings(r.categories);
        if (!r.subresources.empty()) {
          json::array subs;
          for (const auto& s : r.subresources)
            subs.emplace_back(json::object{
                {"subresource", s.name}, {"responseKind", kind_json(s.response_kind)}, {"verbs", strings(s.verbs)}});
          ro["subresources"] = std::move(subs);
        }
        resources.emplace_back(std::move(ro));
      }
      vo["resources"] = std::move(resources);
      vo["freshness"] = v.failure ? "Stale" : "Current";
      versions.emplace_back(std::move(vo));
    }
    items.emplace_back(json::object{{"metadata", json::object{{"name", g.name}}}, {"versions", std::move(versions)}});
  }
  const json::object top{{"kind", "APIGroupDiscoveryList"},
                         {"apiVersion", "apidiscovery.k8s.io/v2"},
                         {"metadata", json::object{}},
                         {"items", std::move(items)}};
  return json::serialize(top);
}

}  // namespace kube
