#include <kube/exception.hpp>
#include <kube/discovery/rest_mapper.hpp>

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <utility>

namespace kube {
namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return r;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

bool has_name(const std::vector<std::string>& names, std::string_view n) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& s) { return iequals(s, n); });
}

// Group filters of client-go's ResourcesFor: exact, or prefix when no exact hit.
bool group_is(const api_resource& r, std::string_view g) { return g.empty() || r.group == g; }
bool group_starts(const api_resource& r, std::string_view g) { return r.group.compare(0, g.size(), g) == 0; }

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

const api_resource& or_throw(const api_resource* r, const error_code& ec, diagnostics& d) {
  if (!r) throw error(ec, std::move(d));
  return *r;
}

}  // namespace

rest_mapper::rest_mapper(const discovery_document& doc) {
  auto add_version = [&](const api_group::version_entry& v) {
    for (const auto& r : v.resources) entries_.push_back(r);
  };
  auto add_group = [&](const api_group& g) {
    // Preferred version first, then the others in server order.
    if (const auto* p = g.find_version(g.preferred_version)) add_version(*p);
    for (const auto& v : g.versions)
      if (v.version != g.preferred_version) add_version(v);
  };
  // client-go puts the core group's v1 before everything ("/v1 is special").
  const auto* core = doc.find_group("");
  if (core)
    if (const auto* v1 = core->find_version("v1")) add_version(*v1);
  for (const auto& g : doc.groups) {
    if (!g.name.empty()) {
      add_group(g);
      continue;
    }
    // The core group's other versions (none exist today) after its v1.
    api_group rest = g;
    std::erase_if(rest.versions, [](const auto& v) { return v.version == "v1"; });
    if (rest.preferred_version == "v1") rest.preferred_version.clear();
    add_group(rest);
  }
}

const api_resource* rest_mapper::match_resource(std::string group, std::string version, std::string name) const {
  name = lower(name);
  auto names_it = [&](const api_resource& r) { return r.plural == name || iequals(r.singular, name); };

  // Short names are expanded only when no resource (in the group, if given)
  // has this plural or singular, as kubectl's shortcut expander does.
  const bool is_long_name = std::any_of(entries_.begin(), entries_.end(),
                                        [&](const api_resource& r) { return group_is(r, group) && names_it(r); });
  if (!is_long_name) {
    const api_resource* hit = nullptr;
    for (const auto& r : entries_)
      if (group_is(r, group) && has_name(r.short_names, name)) {
        hit = &r;
        break;
      }
    if (!hit && !group.empty())
      for (const auto& r : entries_)
        if (group_starts(r, group) && has_name(r.short_names, name)) {
          hit = &r;
          break;
        }
    if (hit) {
      name = hit->plural;
      group = hit->group;
    }
  }

  // The first candidate in priority order decides the group/version; within
  // it an exact plural beats a singular.
  auto pick = [&](auto&& group_ok) -> const api_resource* {
    const api_resource* best = nullptr;
    for (const auto& r : entries_) {
      if (!group_ok(r) || (!version.empty() && r.version != version) || !names_it(r)) continue;
      if (best && (best->group != r.group || best->version != r.version)) break;
      if (!best || (r.plural == name && best->plural != name)) best = &r;
    }
    return best;
  };
  if (const auto* hit = pick([&](const api_resource& r) { return group_is(r, group); })) return hit;
  // client-go tries the group as a prefix only when no version was given.
  if (!group.empty() && version.empty()) return pick([&](const api_resource& r) { return group_starts(r, group); });
  return nullptr;
}

const api_resource* rest_mapper::match_kind(std::string_view group, std::string_view version,
                                            std::string_view kind) const {
  for (const auto& r : entries_)
    if (r.group == group && (version.empty() || r.version == version) && iequals(r.kind, kind)) return &r;
  return nullptr;
}

const api_resource* rest_mapper::resource_for(const group_version_kind& gvk, error_code& ec, diagnostics& diag) const {
  if (const auto* r = match_kind(gvk.group, gvk.version, gvk.kind)) {
    ec = {};
    return r;
  }
  ec = api_errc::not_found;
  diag.set_client_message("no resource serves kind " + quoted(gvk.kind) + " in " +
                          (gvk.group.empty() ? std::string("the core group") : "group " + quoted(gvk.group)) +
                          (gvk.version.empty() ? std::string() : " version " + quoted(gvk.version)));
  return nullptr;
}

const api_resource* rest_mapper::kind_for(const group_version_resource& gvr, error_code& ec, diagnostics& diag) const {
  if (const auto* r = match_resource(gvr.group, gvr.version, gvr.resource)) {
    ec = {};
    return r;
  }
  ec = api_errc::not_found;
  std::string m = "the server doesn't have a resource type " + quoted(gvr.resource);
  if (!gvr.group.empty()) m += " in group " + quoted(gvr.group);
  if (!gvr.version.empty()) m += " at version " + quoted(gvr.version);
  diag.set_client_message(std::move(m));
  return nullptr;
}

const api_resource* rest_mapper::resolve(std::string_view type, error_code& ec, diagnostics& diag) const {
  ec = {};
  // kubectl's schema.ParseResourceArg / ParseKindArg: "a.b.c..." is
  // {a, version b, group c...} when there are two dots or more, and always
  // also {a, group "b.c..."}.
  const auto dot = type.find('.');
  const auto head = type.substr(0, dot);
  const auto group = dot == std::string_view::npos ? std::string_view() : type.substr(dot + 1);
  std::string_view fq_version, fq_group;
  if (const auto dot2 = group.find('.'); !group.empty() && dot2 != std::string_view::npos) {
    fq_version = group.substr(0, dot2);
    fq_group = group.substr(dot2 + 1);
  }
  if (!head.empty()) {
    const bool fully = !fq_version.empty();
    if (fully)
      if (const auto* r = match_resource(std::string(fq_group), std::string(fq_version), std::string(head))) return r;
    if (const auto* r = match_resource(std::string(group), "", std::string(head))) return r;
    if (fully)
      if (const auto* r = match_kind(fq_group, fq_version, head)) return r;
    if (const auto* r = match_kind(group, "", head)) return r;
  }
  ec = api_errc::not_found;
  diag.set_client_message("the server doesn't have a resource type " + quoted(type));
  return nullptr;
}

const api_resource& rest_mapper::resource_for(const group_version_kind& gvk) const {
  error_code ec;
  diagnostics d;
  const auto* r = resource_for(gvk, ec, d);
  return or_throw(r, ec, d);
}

const api_resource& rest_mapper::kind_for(const group_version_resource& gvr) const {
  error_code ec;
  diagnostics d;
  const auto* r = kind_for(gvr, ec, d);
  return or_throw(r, ec, d);
}

const api_resource& rest_mapper::resolve(std::string_view type) const {
  error_code ec;
  diagnostics d;
  const auto* r = resolve(type, ec, d);
  return or_throw(r, ec, d);
}

std::vector<const api_resource*> rest_mapper::resources_for_category(std::string_view category) const {
  std::vector<const api_resource*> out;
  std::set<std::pair<std::string, std::string>> seen;  // (group, plural)
  for (const auto& r : entries_)
    if (has_name(r.categories, category) && seen.emplace(r.group, r.plural).second) out.push_back(&r);
  return out;
}

}  // namespace kube
