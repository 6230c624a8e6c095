#pragma once

// A disk cache of discovery documents, one file per server, with a TTL.

#include <kube/diagnostics.hpp>
#include <kube/discovery/discovery_document.hpp>
#include <kube/error.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>

namespace kube {

/// Options of a discovery_cache.
struct discovery_cache_params {
  /// Directory that holds one sub-directory per server. Empty: the default,
  /// `$KUBECACHEDIR/discovery` or `$HOME/.kube/cache/discovery` (kubectl's
  /// place; our files have their own names, so both caches can share it).
  /// If neither variable is set the cache is disabled (load misses, store is a no-op).
  std::filesystem::path root{};

  /// How long an entry is fresh (seconds). kubectl's default is 6 hours.
  std::chrono::seconds ttl = std::chrono::hours(6);

  /// The clock that stamps and judges entries; empty: system_clock::now.
  /// Tests inject one to expire entries without sleeping.
  std::function<std::chrono::system_clock::time_point()> now{};
};

/// Discovery documents on disk, keyed by server URL, like kubectl's
/// `~/.kube/cache/discovery/<host_port>/`.
///
/// Layout: `<root>/<host>_<port>[_<path>]-<hash>/kube-discovery.json`, where the
/// hash (64-bit FNV-1a of the canonical URL) keeps `http://` and `https://`, or
/// two proxy paths, apart. The canonical URL keeps scheme, host, port and
/// path only: user info, query and fragment are dropped, so no credential
/// that a URL might carry reaches the disk. The file holds a one-line header
/// (format, canonical server, fetch time) and the document as an
/// apidiscovery.k8s.io/v2 list (discovery_document::to_json).
///
/// Writes are atomic: a temporary file in the same directory renamed over the
/// entry, so readers see the old or the new file, never half of one.
/// load() treats a missing, unreadable, corrupt, foreign-format, stale
/// (older than ttl) or future-dated (clock went back more than a minute)
/// entry as a miss: the caller refetches and stores again.
///
/// Thread safety: const member functions may be called concurrently, also
/// from several processes (each writer has its own temporary file and rename
/// is atomic; the last store wins); an injected `now` must then be safe to
/// call concurrently too. All calls do blocking file I/O.
///
/// Errors: store() returns client_errc::file_error naming the path when it
/// cannot write, client_errc::invalid_config when the server URL is not an
/// absolute http(s) URL; load() and invalidate() never fail: load misses.
/// Cancellation: none; nothing here is asynchronous.
class discovery_cache {
public:
  explicit discovery_cache(discovery_cache_params params = {});

  /// The fresh entry for `server_url`, or nullopt.
  [[nodiscard]] std::optional<discovery_document> load(std::string_view server_url) const;

  /// Writes `doc` as the entry for `server_url`, stamped with now().
  [[nodiscard]] error_code store(std::string_view server_url, const discovery_document& doc, diagnostics& diag) const;

  /// Removes the entry (kubectl does this when a name does not resolve, then
  /// rediscovers). A missing entry is not an error.
  void invalidate(std::string_view server_url) const;

  /// The file that holds the entry for `server_url`; empty if the cache is
  /// disabled or the URL does not parse.
  [[nodiscard]] std::filesystem::path path_for(std::string_view server_url) const;

  /// `server_url` reduced to scheme://host:port/path (lower-case scheme and
  /// host, default port made explicit, no trailing '/'); nullopt if it is not
  /// an absolute http(s) URL.
  [[nodiscard]] static std::optional<std::string> canonical_server(std::string_view server_url);

  [[nodiscard]] const std::filesystem::path& root() const noexcept { return root_; }

private:
  [[nodiscard]] std::chrono::system_clock::time_point now() const;

  std::filesystem::path root_;
  discovery_cache_params params_;
};

}  // namespace kube
