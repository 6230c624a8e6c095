#pragma once

// Sharded controllers: the options (sharding_params), their check, and the
// names derived from them (the membership Lease, the label mode's object
// label). The overview is at the top of <kube/controller/sharding.hpp>.

#include <kube/controller/sharding/hash_ring.hpp>
#include <kube/error.hpp>
#include <kube/logger.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace kube::controller {

/// The prefix of the label mode's object label: `shard.kube-cpp.dev/RING=IDENTITY`.
inline constexpr std::string_view shard_object_label_prefix = "shard.kube-cpp.dev/";
/// The label every membership Lease of a ring carries (value: the ring).
inline constexpr std::string_view shard_ring_label = "sharding.kube-cpp.dev/ring";
/// The Lease annotation that holds the view its replica acknowledged.
inline constexpr std::string_view shard_view_annotation = "sharding.kube-cpp.dev/view";

/// Options of a sharded controller (controller_params::sharding).
struct sharding_params {
  /// The ring's name (e.g. the controller's name): replicas with the same
  /// ring share keys. Required; 1-63 characters of [a-z0-9.-], each
  /// dot-separated part starting and ending alphanumeric (it is a label
  /// value and part of the Lease names and of the object label).
  std::string ring;
  /// Where the membership Leases live. Required.
  std::string lease_namespace;
  /// This replica (e.g. the pod name), unique in the ring. Required; the
  /// same form as `ring`. A Lease held by another identity is never taken.
  std::string identity;

  /// As leader election's (leader_elector_params): a replica whose Lease
  /// did not change for lease_duration is removed; a replica that could not
  /// renew within renew_deadline starts no reconcile until it has; Leases
  /// are renewed every retry_period.
  std::chrono::milliseconds lease_duration = std::chrono::seconds(15);
  std::chrono::milliseconds renew_deadline = std::chrono::seconds(10);
  std::chrono::milliseconds retry_period = std::chrono::seconds(2);
  unsigned tokens_per_member = hash_ring::default_tokens;

  /// What is hashed for a key ("namespace/name"); empty: the key itself.
  /// E.g. the namespace, so that one replica owns a namespace's objects.
  std::function<std::string(const std::string& key)> shard_key = {};

  /// Label mode (see the top of <kube/controller/sharding.hpp>): build the
  /// factory with informer_factory_params::label_selector = shard_label_selector(p).
  /// The primary and the owns<U>() types are labelled; informers given by
  /// hand and watches<U>() types are not (give them a factory without the
  /// selector).
  bool label_objects = false;

  /// The monotonic clock used for expiry (tests); empty: steady_clock::now.
  std::function<std::chrono::steady_clock::time_point()> now = {};
  /// Joins, leaves, removals and acknowledgements (info), failed writes
  /// (warning). Default: warnings and errors to stderr.
  kube::logger log = {};
};

/// Checks the parameters; kube::error(client_errc::invalid_config) naming
/// the field(s) at fault.
void validate(const sharding_params& p);

/// The label mode's object label key: `shard.kube-cpp.dev/RING`.
[[nodiscard]] std::string shard_label_key(const sharding_params& p);
/// The selector of this replica's objects: `shard.kube-cpp.dev/RING=IDENTITY`.
[[nodiscard]] std::string shard_label_selector(const sharding_params& p);
/// The name of a replica's membership Lease: `RING-shard-IDENTITY` (lower-cased).
[[nodiscard]] std::string shard_lease_name(const sharding_params& p);

}  // namespace kube::controller
