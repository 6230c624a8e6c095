#pragma once

// The sans-io half of discovery: which documents to fetch, in what order, and
// what the answers mean. The transport (HTTP, TLS, auth) lives elsewhere; it
// carries out the requests this planner hands it and feeds the answers back.

#include <kube/diagnostics.hpp>
#include <kube/discovery/discovery_document.hpp>
#include <kube/error.hpp>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kube {

/// The Accept header for aggregated discovery, with the legacy documents as
/// fallback (exactly what kubectl 1.30+ sends).
inline constexpr std::string_view aggregated_discovery_accept =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json";

/// The Accept header for legacy discovery documents.
inline constexpr std::string_view legacy_discovery_accept = "application/json";

/// Options of a discovery run.
struct discovery_params {
  /// Ask for aggregated discovery first (two requests in all). false: legacy
  /// only (1 + 1 + one request per group/version), for servers or proxies
  /// that mishandle the aggregated media type.
  bool aggregated = true;
};

/// One GET the transport must issue: `path` (absolute, no query) with `accept`.
struct discovery_request {
  std::string path;
  std::string accept;

  friend bool operator==(const discovery_request&, const discovery_request&) = default;
};

/// The server's answer to one discovery_request.
struct discovery_response {
  int status = 200;               ///< HTTP status code
  std::string_view content_type;  ///< the Content-Type header, verbatim
  std::string_view body;          ///< the (decompressed) body
};

/// Drives one discovery run without doing any I/O.
///
/// It starts with GET /api and GET /apis (aggregated Accept by default). The
/// kind of each answer decides what follows: an APIGroupDiscoveryList is
/// complete; a legacy APIVersions / APIGroupList (an older server, or one
/// whose aggregated discovery is off) makes the planner ask for the
/// APIResourceList of every group/version it names.
///
/// Use:
/// ```
/// discovery_planner p;
/// while (!p.done())
///   for (auto& req : p.take_requests()) {         // may run them concurrently
///     auto [status, ctype, body] = GET(req.path, req.accept);
///     if (auto ec = p.on_response(req, {status, ctype, body}, diag)) fail(ec, diag);
///   }
/// discovery_document doc = std::move(p).result();
/// ```
///
/// Errors (on_response / on_transport_error return them; the run is then over
/// and done() is true):
///   - a root document (/api, /apis) that does not decode: client_errc::decode_error
///     naming the path and field;
///   - a root answered with a non-2xx other than 403/404 (client-go treats
///     those two as "no groups there"): the api_errc of the Status, whose body
///     is in diag.server_status();
///   - a transport failure on a root: that error.
/// A group/version whose APIResourceList fails (any status, transport error or
/// decode error) does not end the run: it is recorded in
/// api_group::version_entry::failure and the rest is used, as client-go does.
///
/// Thread safety: none; one planner is driven by one strand.
/// Cancellation: the planner holds no resources; drop it.
class discovery_planner {
public:
  explicit discovery_planner(discovery_params params = {});

  /// The requests to issue now (each returned once). Every one must later be
  /// answered by on_response or on_transport_error, in any order.
  [[nodiscard]] std::vector<discovery_request> take_requests();

  /// Feeds the answer to `req`.
  [[nodiscard]] error_code on_response(const discovery_request& req, const discovery_response& resp, diagnostics& diag);

  /// Feeds a transport failure (connection, TLS, timeout, ...) for `req`.
  [[nodiscard]] error_code on_transport_error(const discovery_request& req, error_code ec, diagnostics& diag);

  /// True when nothing is outstanding and nothing is left to take, or after a
  /// fatal error.
  [[nodiscard]] bool done() const noexcept;

  /// True if the server answered the root it was asked with aggregated
  /// discovery (both roots), false if any legacy fallback was used.
  [[nodiscard]] bool used_aggregated() const noexcept { return legacy_roots_ == 0; }

  /// The assembled document: the core group first, then the groups of /apis.
  /// Precondition: done() and no fatal error was returned.
  [[nodiscard]] discovery_document result() &&;

private:
  enum class slot_kind { api_root, apis_root, group_version };
  struct slot {
    slot_kind kind;
    std::size_t group = 0;    // index into core_ / groups_ for group_version slots
    std::size_t version = 0;  // index into that group's versions
    bool core = false;        // group_version slot of the core group
    bool answered = false;
  };

  error_code fatal(error_code ec);
  error_code on_root(slot& s, const discovery_request& req, const discovery_response& resp, diagnostics& diag);
  void add_request(std::string path, slot s);
  api_group::version_entry& entry_of(const slot& s);

  discovery_params params_;
  std::map<std::string, slot> slots_;  // by request path
  std::vector<discovery_request> to_take_;
  std::size_t outstanding_ = 0;
  bool failed_ = false;
  int legacy_roots_ = 0;
  std::vector<api_group> core_;    // from /api (zero or one group)
  std::vector<api_group> groups_;  // from /apis
};

}  // namespace kube
