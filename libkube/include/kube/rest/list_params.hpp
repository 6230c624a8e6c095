#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace kube {

/// Options of list calls (and the common part of watch calls). Every field
/// defaults to "not sent", which is the server's default.
struct list_params {
  std::string label_selector = {};                ///< "app=web,tier!=db"
  std::string field_selector = {};                ///< "metadata.name=x"
  std::optional<long long> limit = {};            ///< page size (items); auto-pagination uses 500 when unset
  std::string continue_token = {};                ///< resume a paginated list
  std::string resource_version = {};              ///< "" = most recent (quorum read), "0" = any (cache)
  std::string resource_version_match = {};        ///< "NotOlderThan" or "Exact" (with resource_version)
  std::optional<long long> timeout_seconds = {};  ///< server-side timeout, s
};

/// Options of watch calls.
struct watch_params {
  std::string label_selector = {};
  std::string field_selector = {};
  std::string resource_version = {};              ///< start after this version; "" = now, "0" = any
  bool allow_bookmarks = true;                    ///< BOOKMARK events carry progress (resourceVersion)
  std::optional<long long> timeout_seconds = {};  ///< the server ends the watch after this, s
  bool send_initial_events = false;               ///< streaming list (needs resource_version_match=NotOlderThan)
  std::string resource_version_match = {};
  /// Client side, not sent: a watch whose read has waited this long for
  /// data is presumed dead (a half-open connection, a hung server), closed,
  /// and its async_next fails with boost::asio::error::timed_out; time spent
  /// between async_next calls does not count; 0 = never. Keep it
  /// well above the server's bookmark period when asking for bookmarks (the
  /// informer does: reflector_params::watch_idle_timeout).
  std::chrono::milliseconds idle_timeout{0};
};

/// Options of create/replace/patch.
struct write_params {
  std::string field_manager = {};     ///< recorded in managedFields; required for server-side apply
  bool dry_run = false;               ///< validate and admit, persist nothing
  std::string field_validation = {};  ///< "Strict", "Warn" or "Ignore"
};

/// The patch formats the API accepts.
enum class patch_type {
  json,             ///< application/json-patch+json (RFC 6902)
  merge,            ///< application/merge-patch+json (RFC 7386)
  strategic_merge,  ///< application/strategic-merge-patch+json (built-in types only)
  apply,            ///< application/apply-patch+yaml: server-side apply (JSON is valid YAML)
};

/// Options of patch calls.
struct patch_params {
  std::string field_manager = {};  ///< required for apply
  bool force = false;              ///< apply: take ownership of conflicting fields
  bool dry_run = false;
  std::string field_validation = {};
};

/// Options of delete calls.
struct delete_params {
  std::string propagation_policy = {};                 ///< "Foreground", "Background" or "Orphan"
  std::optional<long long> grace_period_seconds = {};  ///< s
  std::string precondition_uid = {};                   ///< delete only if the object still has this UID
  std::string precondition_resource_version = {};      ///< ... and/or this resourceVersion
  bool dry_run = false;
};

[[nodiscard]] const char* content_type_of(patch_type t) noexcept;

/// A default-constructed options object with static storage, used as the
/// default argument of async operations (a reference to it creates no
/// temporary inside co_await expressions; see dynamic_api).
template <class Params>
inline const Params defaults{};

}  // namespace kube
