#pragma once

// Sharded controllers: several replicas of one controller, each reconciling
// the keys a consistent-hash ring assigns to it (docs/guides/sharding.md).
//
// Membership is a coordination.k8s.io/v1 Lease per replica, labelled
// sharding.kube-cpp.dev/ring=<ring>, held (holderIdentity) and renewed by the
// replica. The ring's members are the holders of those Leases: a view is a
// function of the Leases the apiserver holds, so every replica sees the
// same sequence of views (a watch delivers one resource's changes in order).
// A replica whose Lease has not changed for its duration (by the observer's
// monotonic clock, as in leader election) is removed by whoever sees it
// first: an update that empties the holder, guarded by the resourceVersion
// seen.
//
// Safe handover: each replica acknowledges a view in its Lease (annotation
// sharding.kube-cpp.dev/view) only once no reconcile of a key it does not own
// under that view is running. A replica starts a key only when
//   - the key is its own under its current view,
//   - every member of that view has acknowledged it, and its own latest
//     acknowledgement is in the Leases it observes (its informer is not
//     behind its own write),
//   - it renewed its Lease within renew_deadline.
// So the old owner has dropped the key (and said so) before the new owner
// starts it. See the guide for the proof sketch and the failure cases.
//
// Label mode (sharding_params::label_objects): objects carry the label
// shard.kube-cpp.dev/<ring>=<identity> of the replica that owns their key,
// and each replica's informers select only its own, so its caches hold
// about 1/n of the objects. The replicas write the labels themselves: the
// owner labels unlabelled objects (a metadata informer over "!label"), a
// replica hands what it loses to the new owner before it acknowledges a
// view, and objects labelled for a replica that is not a member are taken
// by their owners when a view is agreed.

#include <kube/detail/initiate.hpp>
#include <kube/discovery/group_version_resource.hpp>
#include <kube/dynamic/metadata_api.hpp>
#include <kube/error.hpp>
#include <kube/logger.hpp>
#include <kube/rest/client.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kube::controller {

/// The prefix of the label mode's object label: `shard.kube-cpp.dev/RING=IDENTITY`.
inline constexpr std::string_view shard_object_label_prefix = "shard.kube-cpp.dev/";
/// The label every membership Lease of a ring carries (value: the ring).
inline constexpr std::string_view shard_ring_label = "sharding.kube-cpp.dev/ring";
/// The Lease annotation that holds the view its replica acknowledged.
inline constexpr std::string_view shard_view_annotation = "sharding.kube-cpp.dev/view";

/// A stable 64-bit hash of a string (FNV-1a, then a mixing finalizer): the
/// same in every process, build and platform, which a ring shared by
/// replicas needs (std::hash promises none of that).
[[nodiscard]] std::uint64_t shard_hash(std::string_view s) noexcept;

/// Consistent hashing over members, with `tokens_per_member` virtual nodes
/// each (the key's owner is the member of the first token at or after the
/// key's hash, wrapping around). Adding or removing one member moves only
/// the keys that member gains or loses. A plain value.
class hash_ring {
public:
  static constexpr unsigned default_tokens = 100;

  hash_ring() = default;
  /// Duplicates and empty names are ignored.
  explicit hash_ring(std::vector<std::string> members, unsigned tokens_per_member = default_tokens);

  /// The member owning `key` ("" when the ring is empty).
  [[nodiscard]] const std::string& owner(std::string_view key) const noexcept;
  /// Sorted, unique.
  [[nodiscard]] const std::vector<std::string>& members() const noexcept { return members_; }
  [[nodiscard]] bool empty() const noexcept { return members_.empty(); }

private:
  std::vector<std::string> members_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> tokens_;  // (hash, index into members_), sorted
};

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

  /// Label mode (see the top of this header): build the factory with
  /// informer_factory_params::label_selector = shard_label_selector(p).
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

/// One membership Lease as observed.
struct shard_lease {
  std::string name;
  std::string holder;  ///< spec.holderIdentity ("" : released or removed)
  int lease_duration_seconds = 0;
  std::string view;              ///< the acknowledged view ("" : none yet)
  std::string resource_version;  ///< changes with every write (renewals too)
};

/// The view of a set of holders: the sorted identities joined by ','.
[[nodiscard]] std::string encode_view(const std::vector<std::string>& members);

/// What a replica may do with a key now.
enum class shard_decision {
  mine,     ///< start it
  waiting,  ///< it is ours under the current view, which not everybody has acknowledged yet
  not_mine  ///< another replica's (or this replica is not a member)
};

/// The membership rules without I/O, on an explicit monotonic time:
/// the Leases observed, this replica's own writes, and the decisions.
/// shard_coordinator drives it; tests drive it with a manual clock.
/// Thread safety: none (a plain value).
class shard_membership {
public:
  using time_point = std::chrono::steady_clock::time_point;

  shard_membership(std::string identity, std::chrono::milliseconds renew_deadline,
                   unsigned tokens_per_member = hash_ring::default_tokens);

  /// The ring's Leases as observed at `now` (all of them, each time).
  /// A Lease whose resourceVersion differs from the last observation is
  /// observed anew (its expiry counts from now).
  void observe(std::vector<shard_lease> leases, time_point now);
  /// This replica wrote its Lease at `now` (joined, renewed or
  /// acknowledged `view`); `rv` is the written object's resourceVersion.
  void wrote(const std::string& view, const std::string& rv, time_point now);
  /// This replica's Lease was emptied by another or it released it: it is
  /// not a member until it writes again.
  void left() noexcept;

  /// The current view (holders of the observed Leases) and its ring.
  [[nodiscard]] const hash_ring& ring() const noexcept { return ring_; }
  [[nodiscard]] const std::string& view() const noexcept { return view_; }
  /// The view this replica acknowledged last ("" : none).
  [[nodiscard]] const std::string& acknowledged() const noexcept { return ack_; }
  /// The current view differs from the acknowledged one: acknowledge it
  /// once no running key is lost by it.
  [[nodiscard]] bool needs_acknowledgement() const noexcept { return member() && view_ != ack_; }
  /// This replica is in the current view.
  [[nodiscard]] bool member() const noexcept;
  /// This replica wrote its Lease since it last left (it may not be in the
  /// view yet: the informer may not have shown the write).
  [[nodiscard]] bool joined() const noexcept { return last_write_.has_value(); }
  /// Every member of the current view acknowledged it, this replica's last
  /// acknowledgement is visible, and it wrote its Lease within
  /// renew_deadline.
  [[nodiscard]] bool agreed(time_point now) const noexcept;
  /// The owner of `shard_key` under the current view ("" : none).
  [[nodiscard]] const std::string& owner(std::string_view shard_key) const noexcept { return ring_.owner(shard_key); }
  [[nodiscard]] shard_decision decide(std::string_view shard_key, time_point now) const noexcept;

  /// Held Leases of others that did not change for their duration (to be
  /// emptied, guarded by the resourceVersion in the returned record).
  [[nodiscard]] std::vector<shard_lease> expired(time_point now) const;
  /// The Lease observed for `name`, if any.
  [[nodiscard]] const shard_lease* find(std::string_view name) const noexcept;
  [[nodiscard]] const std::string& identity() const noexcept { return identity_; }

private:
  struct observed {
    shard_lease lease;
    time_point since;
  };
  std::string identity_;
  std::chrono::milliseconds renew_deadline_;
  unsigned tokens_;
  std::map<std::string, observed, std::less<>> leases_;  // by Lease name
  hash_ring ring_;
  std::string view_;
  std::string ack_;     // last acknowledged view
  std::string ack_rv_;  // resourceVersion of the write that set it
  std::optional<time_point> last_write_;
};

/// A resource whose objects a label-mode coordinator labels (the
/// controller's primary or an owned type).
struct shard_labeled_resource {
  group_version_resource gvr;
  std::string namespace_name;  ///< the one its informer watches ("" : all, or cluster-scoped)
  /// The controller key an object belongs to: its own for the primary, its
  /// controller owner's for an owned type (none: not the controller's).
  std::function<std::optional<std::string>(const partial_object_metadata&)> key_of;
  /// What this replica's (label-selected) informer holds: namespace, name,
  /// resourceVersion and key of each object.
  struct cached_object {
    std::string namespace_name, name, resource_version, key;
  };
  std::function<std::vector<cached_object>()> cached;
};

namespace detail {
class shard_coordinator_impl;
}

/// What a shard_coordinator reports to its controller.
struct shard_coordinator_hooks {
  /// This replica may start keys again (agreement reached): enqueue the
  /// keys kept while waiting (take_waiting) and, when `new_view`, every key
  /// it owns now. Called on the coordinator's strand.
  std::function<void(bool new_view)> on_agreed = {};
};

/// Runs one replica's membership: its Lease (join, renew, acknowledge,
/// release), an informer over the ring's Leases, the removal of expired
/// members, and the admission of keys (try_start / finish).
///
/// async_run(token): completion void(error_code). Joins, then runs until
/// cancelled; on cancellation it stops admitting keys, waits until the
/// started ones have finished, releases its Lease (the others take its
/// keys at once) and completes with operation_aborted.
///
/// One-shot: a second async_run admits no key.
///
/// Thread safety: try_start, finish, take_waiting, decide, members, owner
/// and shard_key may be called from any thread; the rest runs on the
/// coordinator's strand.
class shard_coordinator {
public:
  /// Throws kube::error(client_errc::invalid_config) for bad params.
  shard_coordinator(client c, sharding_params params, shard_coordinator_hooks hooks = {});
  ~shard_coordinator();
  shard_coordinator(const shard_coordinator&) = delete;
  shard_coordinator& operator=(const shard_coordinator&) = delete;

  template <class Token = kube::use_awaitable_t>
  auto async_run(Token&& token = {}) {
    return kube::detail::initiate_void([impl = impl_](auto handler) mutable { start(impl, std::move(handler)); },
                                       std::forward<Token>(token));
  }

  /// Completes once this replica is a member and its Lease informer has
  /// synced (the controller's workers start after it).
  template <class Token = kube::use_awaitable_t>
  auto async_wait_joined(Token&& token = {}) {
    return kube::detail::initiate_void([impl = impl_](auto handler) mutable { wait_joined(impl, std::move(handler)); },
                                       std::forward<Token>(token));
  }

  /// Label mode: the resources to label. Call before async_run.
  void label(std::vector<shard_labeled_resource> resources);
  /// Label mode: completes with true when the object of `key` (of the
  /// primary resource) exists on the server, without reading the cache
  /// (a key missing from this replica's cache may be on its way to it).
  [[nodiscard]] boost::asio::awaitable<bool> primary_exists(const std::string& key);

  /// The shard key of a reconcile key (sharding_params::shard_key).
  [[nodiscard]] std::string shard_key(const std::string& key) const;
  /// What this replica may do with `key` now (no side effect).
  [[nodiscard]] shard_decision decide(const std::string& key) const;
  /// decide(key), and when mine, counts the key as running until
  /// finish(key). A waiting key is kept and enqueued again through
  /// on_agreed.
  [[nodiscard]] shard_decision try_start(const std::string& key);
  /// decide(key) again for a started key, right before its reconcile runs
  /// (after the waits that follow try_start: a renewal may have fallen
  /// behind meanwhile). A waiting key is kept as by try_start; the key
  /// stays started until finish(key) either way.
  [[nodiscard]] shard_decision confirm(const std::string& key);
  void finish(const std::string& key);
  /// The keys kept by try_start while waiting (taken: the set is emptied).
  [[nodiscard]] std::vector<std::string> take_waiting();

  /// The current view's members, and the owner of a key under it.
  [[nodiscard]] std::vector<std::string> members() const;
  [[nodiscard]] std::string owner(const std::string& key) const;
  [[nodiscard]] const sharding_params& params() const noexcept;
  [[nodiscard]] const client& get_client() const noexcept;

private:
  static void start(std::shared_ptr<detail::shard_coordinator_impl> impl,
                    boost::asio::any_completion_handler<void(error_code)> handler);
  static void wait_joined(std::shared_ptr<detail::shard_coordinator_impl> impl,
                          boost::asio::any_completion_handler<void(error_code)> handler);
  std::shared_ptr<detail::shard_coordinator_impl> impl_;
};

}  // namespace kube::controller
