#include "codec/parse_json.hpp"
#include <kube/discovery/discovery_planner.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <utility>

namespace kube {
namespace json = boost::json;

namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return r;
}

// The media type without parameters, and whether it names the aggregated list.
struct media {
  std::string type;         // "application/json"
  bool aggregated = false;  // ...;g=apidiscovery.k8s.io;...;as=APIGroupDiscoveryList
};

media parse_media(std::string_view content_type) {
  media m;
  const auto ct = lower(content_type);
  const auto semi = ct.find(';');
  m.type = ct.substr(0, semi);
  m.type.erase(std::remove_if(m.type.begin(), m.type.end(), [](unsigned char c) { return std::isspace(c); }),
               m.type.end());
  if (semi != std::string::npos) {
    const auto params = ct.substr(semi);
    m.aggregated = params.find("as=apigroupdiscoverylist") != std::string::npos;
  }
  return m;
}

// The body's "kind", or "" if it is not a JSON object with one.
std::string peek_kind(std::string_view body) {
  error_code ec;
  const auto v = detail::parse_json(body, ec);
  if (ec || !v.is_object()) return {};
  const auto* k = v.as_object().if_contains("kind");
  return k && k->is_string() ? std::string(k->as_string()) : std::string();
}

// A non-2xx answer: the Status's reason decides the code; the Status goes to diag.
error_code status_error(std::string_view path, const discovery_response& resp, diagnostics& diag) {
  std::string reason;
  error_code jec;
  auto v = detail::parse_json(resp.body, jec);
  if (!jec && v.is_object()) {
    auto& o = v.as_object();
    if (const auto* r = o.if_contains("reason"); r && r->is_string()) reason = std::string(r->as_string());
    if (const auto* k = o.if_contains("kind"); k && k->is_string() && k->as_string() == "Status")
      diag.set_server_status(std::move(o));
  }
  diag.set_client_message("discovery: GET " + std::string(path) + ": HTTP " + std::to_string(resp.status));
  return api_errc_from_status(reason, resp.status);
}

bool is_2xx(int status) { return status >= 200 && status < 300; }

}  // namespace

discovery_planner::discovery_planner(discovery_params params)
    : params_(params) {
  add_request("/api", slot{slot_kind::api_root});
  add_request("/apis", slot{slot_kind::apis_root});
}

void discovery_planner::add_request(std::string path, slot s) {
  const auto accept =
      s.kind != slot_kind::group_version && params_.aggregated ? aggregated_discovery_accept : legacy_discovery_accept;
  to_take_.push_back({path, std::string(accept)});
  slots_.emplace(std::move(path), s);
  ++outstanding_;
}

std::vector<discovery_request> discovery_planner::take_requests() {
  if (failed_) return {};
  return std::exchange(to_take_, {});
}

bool discovery_planner::done() const noexcept { return failed_ || (outstanding_ == 0 && to_take_.empty()); }

error_code discovery_planner::fatal(error_code ec) {
  failed_ = true;
  to_take_.clear();
  return ec;
}

api_group::version_entry& discovery_planner::entry_of(const slot& s) {
  auto& groups = s.core ? core_ : groups_;
  return groups[s.group].versions[s.version];
}

error_code discovery_planner::on_transport_error(const discovery_request& req, error_code ec, diagnostics& diag) {
  if (failed_) return client_errc::protocol_error;
  auto it = slots_.find(req.path);
  if (it == slots_.end() || it->second.answered) {
    diag.set_client_message("discovery: unexpected answer for " + req.path);
    return fatal(client_errc::protocol_error);
  }
  it->second.answered = true;
  --outstanding_;
  if (it->second.kind != slot_kind::group_version) {
    if (diag.client_message().empty()) diag.set_client_message("discovery: GET " + req.path + " failed");
    return fatal(ec);
  }
  auto& e = entry_of(it->second);
  e.failure = ec;
  e.failure_message = diag.client_message().empty() ? "GET " + req.path + ": " + ec.message() : diag.client_message();
  diag.clear();
  return {};
}

error_code discovery_planner::on_response(const discovery_request& req, const discovery_response& resp,
                                          diagnostics& diag) {
  if (failed_) return client_errc::protocol_error;
  auto it = slots_.find(req.path);
  if (it == slots_.end() || it->second.answered) {
    diag.set_client_message("discovery: unexpected answer for " + req.path);
    return fatal(client_errc::protocol_error);
  }
  slot& s = it->second;
  s.answered = true;
  --outstanding_;
  if (s.kind != slot_kind::group_version) return on_root(s, req, resp, diag);

  auto& e = entry_of(s);
  const group_version gv{s.core ? std::string() : groups_[s.group].name, e.version};
  if (!is_2xx(resp.status)) {
    diagnostics d;
    e.failure = status_error(req.path, resp, d);
    e.failure_message = d.client_message();
    if (const auto m = d.server_message(); !m.empty()) e.failure_message += ": " + m;
    return {};
  }
  diagnostics d;
  if (auto ec = discovery_document::parse_resource_list(resp.body, req.path, gv, e.resources, d)) {
    e.failure = ec;
    e.failure_message = d.client_message();
    e.resources.clear();
  }
  return {};
}

error_code discovery_planner::on_root(slot& s, const discovery_request& req, const discovery_response& resp,
                                      diagnostics& diag) {
  const bool api = s.kind == slot_kind::api_root;
  if (!is_2xx(resp.status)) {
    // client-go: a server without /api or /apis, or one that forbids it, has no groups there.
    if (resp.status == 403 || resp.status == 404) return {};
    return fatal(status_error(req.path, resp, diag));
  }
  const auto m = parse_media(resp.content_type);
  if (!m.type.empty() && m.type != "application/json") {
    diag.set_client_message("discovery: " + req.path + ": unsupported Content-Type \"" +
                            std::string(resp.content_type) + "\" (want application/json)");
    return fatal(client_errc::decode_error);
  }
  // The media type's "as=" says aggregated; a plain application/json may still
  // carry the aggregated list if a proxy dropped the parameters, so the body's
  // kind decides then.
  const bool aggregated = m.aggregated || peek_kind(resp.body) == "APIGroupDiscoveryList";
  if (aggregated) {
    auto& out = api ? core_ : groups_;
    if (auto ec = discovery_document::parse_aggregated(resp.body, req.path, out, diag)) return fatal(ec);
    if (api && out.size() > 1) {
      diag.set_client_message("discovery: " + req.path +
                              ": APIGroupDiscoveryList: items: expected at most one group "
                              "(the core group), got " +
                              std::to_string(out.size()));
      return fatal(client_errc::decode_error);
    }
    if (api)
      for (auto& g : out) g.name.clear();  // the core group has no name
    return {};
  }

  ++legacy_roots_;
  if (api) {
    std::vector<std::string> versions;
    if (auto ec = discovery_document::parse_api_versions(resp.body, req.path, versions, diag)) return fatal(ec);
    if (versions.empty()) return {};
    api_group core;
    core.preferred_version = versions.front();
    for (auto& v : versions) core.versions.push_back({std::move(v), {}, {}, {}});
    core_.push_back(std::move(core));
    for (std::size_t j = 0; j < core_[0].versions.size(); ++j)
      add_request("/api/" + core_[0].versions[j].version, slot{slot_kind::group_version, 0, j, true});
    return {};
  }
  if (auto ec = discovery_document::parse_group_list(resp.body, req.path, groups_, diag)) return fatal(ec);
  for (std::size_t i = 0; i < groups_.size(); ++i)
    for (std::size_t j = 0; j < groups_[i].versions.size(); ++j)
      add_request("/apis/" + groups_[i].name + "/" + groups_[i].versions[j].version,
                  slot{slot_kind::group_version, i, j, false});
  return {};
}

discovery_document discovery_planner::result() && {
  discovery_document d;
  d.groups = std::move(core_);
  for (auto& g : groups_) d.groups.push_back(std::move(g));
  return d;
}

}  // namespace kube
