#pragma once

// Sharded controllers: shard_coordinator, which runs one replica's
// membership (its Lease, the ring's Lease informer, the admission of keys)
// and, in label mode, labels the objects (shard_labeled_resource). The
// overview is at the top of <kube/controller/sharding.hpp>.

#include <kube/async.hpp>
#include <kube/controller/sharding/membership.hpp>
#include <kube/controller/sharding/params.hpp>
#include <kube/discovery/group_version_resource.hpp>
#include <kube/dynamic/metadata_api.hpp>
#include <kube/rest/client.hpp>
#include <kube/use_awaitable.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kube::controller {

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
    return kube::async_spawn(
        executor(), [impl = impl_] { return run(impl); }, std::forward<Token>(token));
  }

  /// Completes once this replica is a member and its Lease informer has
  /// synced (the controller's workers start after it).
  template <class Token = kube::use_awaitable_t>
  auto async_wait_joined(Token&& token = {}) {
    return kube::async_spawn(
        executor(), [impl = impl_] { return wait_joined(impl); }, std::forward<Token>(token));
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
  // The coordinator's strand: async_run's and async_wait_joined's coroutines run on it.
  [[nodiscard]] boost::asio::any_io_executor executor() const;
  // async_run's coroutine: fails with client_errc::already_running while
  // another run is in progress.
  static boost::asio::awaitable<void> run(std::shared_ptr<detail::shard_coordinator_impl> impl);
  // async_wait_joined's coroutine.
  static boost::asio::awaitable<void> wait_joined(std::shared_ptr<detail::shard_coordinator_impl> impl);
  std::shared_ptr<detail::shard_coordinator_impl> impl_;
};

}  // namespace kube::controller
