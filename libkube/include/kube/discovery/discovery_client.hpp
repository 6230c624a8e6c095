#pragma once

#include <kube/rest/client.hpp>
#include <kube/discovery/discovery_cache.hpp>
#include <kube/discovery/discovery_document.hpp>
#include <kube/discovery/discovery_planner.hpp>
#include <kube/discovery/rest_mapper.hpp>

#include <memory>

namespace kube {

/// Options of discovery_client. Every field has a default.
struct discovery_client_params {
  bool use_cache = true;              ///< read and write the disk cache (kubectl's behaviour)
  discovery_cache_params cache = {};  ///< where, and the TTL (6 h)
  discovery_params discovery = {};    ///< aggregated (default) or legacy discovery
};

namespace detail {
struct discovery_state {
  client c;
  discovery_client_params params;
  discovery_cache cache;
};
void start_discover(std::shared_ptr<const discovery_state> s, bool refresh, completion<discovery_document> h);
}  // namespace detail

/// Fetches what the server serves — aggregated discovery
/// (apidiscovery.k8s.io/v2) first, the legacy documents when the server only
/// has those — through the client, with the disk cache in front.
///
/// async_discover completes with void(error_code, discovery_document):
/// from the cache when it holds a fresh entry for this server (unless
/// `refresh`), else from the server (then written to the cache). A group
/// version that fails alone is recorded in the document, as client-go does;
/// failures of /api or /apis fail the operation with the server's Status.
/// Build a rest_mapper from the document to resolve kubectl-style names.
///
/// Errors: those of discovery_planner for /api and /apis (decode_error
/// naming the path and field, the Status's api_errc, transport errors). A
/// cache that cannot be written is logged at warning through the client's
/// logger, not reported.
///
/// Thread safety and tokens: as kube::client; copies share the client and
/// the cache settings. The requests run one after another on the client's
/// strand, and so does the (blocking) cache file I/O. invalidate_cache()
/// may be called from any thread.
///
/// Cancellation: per operation, terminal only, as kube::client; a cancelled
/// async_discover completes with operation_aborted and writes no cache entry.
class discovery_client {
public:
  explicit discovery_client(client c, discovery_client_params params = {})
      : s_(std::make_shared<const detail::discovery_state>(
            detail::discovery_state{c, params, discovery_cache(params.cache)})) {}

  template <class Token = use_awaitable_t>
  auto async_discover(bool refresh = false, Token&& token = {}) {
    return detail::initiate<discovery_document>(
        [s = s_, refresh](detail::completion<discovery_document> h) {
          detail::start_discover(s, refresh, std::move(h));
        },
        std::forward<Token>(token));
  }

  /// Drops this server's cache entry (e.g. when a name did not resolve).
  void invalidate_cache() const;

private:
  std::shared_ptr<const detail::discovery_state> s_;
};

}  // namespace kube
