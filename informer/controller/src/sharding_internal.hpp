#pragma once

// Internal to kube::controller's sharding: the state of a shard_coordinator,
// shared by sharding_coordinator.cpp (the membership loop and the public
// calls) and sharding_labels.cpp (label mode).

#include <kube/controller/sharding/coordinator.hpp>

#include <kube/dynamic/dynamic_api.hpp>
#include <kube/dynamic/unstructured.hpp>
#include <kube/informer/shared_informer.hpp>
#include <kube/logger.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace kube::controller::detail {

class shard_coordinator_impl : public std::enable_shared_from_this<shard_coordinator_impl> {
public:
  using steady = std::chrono::steady_clock;

  shard_coordinator_impl(client c, sharding_params p, shard_coordinator_hooks h);

  client client_;        // the controller's: label writes
  client lease_client_;  // Lease reads and writes, not queued behind the controller's requests
  sharding_params params_;
  shard_coordinator_hooks hooks_;
  std::string lease_name_;
  dynamic_api leases_;
  boost::asio::any_io_executor ex_;
  boost::asio::steady_timer cv_;         // wakes the main loop (Leases changed, a key finished)
  boost::asio::steady_timer joined_cv_;  // wakes async_wait_joined
  boost::asio::steady_timer label_cv_;   // wakes the label loop
  std::shared_ptr<informer::shared_index_informer<unstructured>> informer_;
  std::atomic<bool> running_{false};

  // Guarded by m_ (read by the controller's workers).
  mutable std::mutex m_;
  shard_membership state_;
  std::map<std::string, unsigned, std::less<>> started_;  // running keys
  std::set<std::string> waiting_;
  bool stopping_ = false;
  bool joined_ = false;

  // Label mode (set before async_run; then on ex_ only).
  struct labeled {
    shard_labeled_resource resource;
    std::shared_ptr<informer::shared_index_informer<partial_object_metadata>> unlabeled;
  };
  std::vector<labeled> labeled_;
  std::string label_key_;
  std::atomic<bool> unlabeled_dirty_{false};
  std::string swept_view_;         // the view whose foreign labels were taken
  steady::time_point swept_at_{};  // and when (the sweep is repeated every 30 s)
  bool swept_foreign_ = false;     // that sweep took objects labelled for non-members
  steady::time_point member_since_{};
  // Between the membership loop and the label loop (both on ex_).
  std::string handover_view_, handed_over_view_;  // asked for / done: relabel what a view gives away
  hash_ring handover_ring_;
  std::string agreed_label_view_;  // "" : not agreed
  hash_ring agreed_ring_;

  // On ex_ only.
  std::optional<unstructured> lease_;  // our Lease as last written or read
  bool was_agreed_ = false;
  bool was_member_ = false;
  bool wake_ = false;                // notify() came: run step() again without pausing
  steady::time_point last_write_{};  // of our Lease, successful

  steady::time_point now() const { return params_.now ? params_.now() : steady::now(); }

  void log(log_level l, const std::string& line) const {
    if (params_.log.enabled(l)) params_.log.log(l, "shard " + params_.ring + "/" + params_.identity + ": " + line);
  }

  std::string shard_key(const std::string& key) const { return params_.shard_key ? params_.shard_key(key) : key; }

  // Runs step() again soon (from any thread).
  void notify();

  // ---- the membership loop (sharding_coordinator.cpp) ----

  // The Leases in the informer's cache, observed now.
  void refresh();
  // Every running key is ours under the current view.
  bool drained_locked() const;
  // Our Lease as it should be written, with `view` acknowledged.
  unstructured desired(const std::string& view) const;
  // Bounded by renew_deadline (client_errc::timeout).
  template <class Op>
  boost::asio::awaitable<std::tuple<error_code, unstructured>> timed(Op op);
  // Writes our Lease held, with `view` acknowledged (see the definition).
  boost::asio::awaitable<bool> write(std::string view);
  // Empties another replica's expired Lease, guarded by the resourceVersion seen.
  boost::asio::awaitable<void> remove(const shard_lease& l);
  boost::asio::awaitable<void> release();
  // Sleeps until notified or `d` passed. Throws when cancelled.
  boost::asio::awaitable<void> pause(steady::duration d);
  // After cancellation (not cancellable itself): checks `done` every 100 ms
  // or when woken.
  template <class Done>
  boost::asio::awaitable<void> poll_until(Done done);
  boost::asio::awaitable<void> run_informer();
  boost::asio::awaitable<void> step();
  boost::asio::awaitable<void> main_loop();
  // Joins and runs until cancelled, then leaves; always throws (the
  // failure, else operation_aborted).
  boost::asio::awaitable<void> run();

  // ---- label mode (sharding_labels.cpp) ----

  // Sets the label to `value` on one object, guarded by `rv` (see the definition).
  boost::asio::awaitable<void> set_label(const shard_labeled_resource& r, const std::string& ns,
                                         const std::string& name, std::string rv,
                                         const std::function<bool(std::string_view)>& still, const std::string& value);
  // The owner of an object's key under `ring` ("" : not the controller's).
  std::string owner_of(const shard_labeled_resource& r, const partial_object_metadata& o, const hash_ring& ring) const;
  // Before acknowledging a view: what this replica holds but loses goes to
  // its new owner.
  boost::asio::awaitable<void> hand_over(const hash_ring& ring);
  // Under an agreed view: take this replica's objects (see the definition).
  boost::asio::awaitable<void> take(const hash_ring& ring, bool sweep, bool foreign);
  // Label mode's writes, apart from the membership loop.
  boost::asio::awaitable<void> label_loop();
};

}  // namespace kube::controller::detail
