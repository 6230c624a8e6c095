#pragma once

#include <kube/informer/delta.hpp>
#include <kube/informer/key_func.hpp>
#include <kube/informer/known_objects.hpp>

#include <kube/error.hpp>
#include <kube/use_awaitable.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace kube::informer {

/// client-go's DeltaFIFO as a sans-io state machine: a FIFO of keys, each with
/// the list of changes (deltas) queued for it. A key keeps its place in the
/// queue while more deltas arrive for it, so one busy object never starves
/// the others; `try_pop` hands out the oldest key with all its deltas.
///
/// Rules (as client-go):
/// - `add`/`update` queue Added/Updated.
/// - `remove` queues Deleted, but is dropped when the key is neither queued
///   nor in the known objects (nothing to tell anyone about).
/// - Two consecutive Deleted deltas of a key collapse into one, keeping the
///   one with more information: the newer, unless the newer is a tombstone.
/// - `replace(list)` queues Replaced for every listed object, then a
///   `Deleted(deleted_final_state_unknown{key, last known object})` for every
///   key missing from the list: first for queued keys (the last known object
///   is the newest queued one), then for known-object keys with nothing
///   queued (the object comes from the store).
/// - `resync` queues Sync for every known object that has nothing queued.
/// - `has_synced` is true once an add/update/remove came before any
///   `replace`, or once every key queued by the first `replace` was popped.
///
/// Consumer side: `try_pop` (synchronous) and `async_pop` (awaitable, for
/// the processor coroutine): it completes at once when a key is queued,
/// otherwise when the producer queues one, with the same delta_list
/// `try_pop` would give. One `async_pop` may be pending at a time (a second
/// completes with operation_in_progress). `close()` ends the FIFO: queued
/// keys are still handed out, then `async_pop` completes with
/// `boost::asio::error::eof` (client-go's ErrFIFOClosed). A pending
/// `async_pop` honours terminal cancellation (operation_aborted; nothing is
/// popped). `add_if_not_present` requeues a popped delta_list the consumer
/// could not process (client-go's AddIfNotPresent).
///
/// Thread safety: none, by design. The FIFO is confined to one
/// executor/strand where the producer (reflector) and the consumer
/// (processor) coroutines run, so the hot path takes no lock and no atomic;
/// a waiting consumer is woken by posting its handler to its executor.
/// The known-objects store is only read, from the same strand.
///
/// Errors: the key function's exceptions propagate; the FIFO is unchanged by
/// a call whose key function threw for its first object (for `replace`, the
/// objects before the failing one stay queued, like client-go).
template <class T>
class delta_fifo {
public:
  using object_ptr = std::shared_ptr<const T>;

  /// `known` (the cache this FIFO feeds, may be null) must outlive the FIFO.
  /// An empty `key` means `default_key_func<T>()`; std::invalid_argument if
  /// T has no default either.
  explicit delta_fifo(key_func<T> key = default_key_func<T>(), const known_objects<T>* known = nullptr)
      : key_(key ? std::move(key) : default_key_func<T>()),
        known_(known) {
    if (!key_) {
      throw std::invalid_argument("delta_fifo: a key function is required for this object type");
    }
  }

  delta_fifo(const delta_fifo&) = delete;
  delta_fifo& operator=(const delta_fifo&) = delete;
  ~delta_fifo() {
    if (waiter_slot_.is_connected()) {
      waiter_slot_.clear();
    }
  }

  void add(object_ptr obj) {
    auto k = key_of(obj);
    populated_ = true;
    queue_action(delta_type::added, std::move(k), std::move(obj));
    wake();
  }

  void update(object_ptr obj) {
    auto k = key_of(obj);
    populated_ = true;
    queue_action(delta_type::updated, std::move(k), std::move(obj));
    wake();
  }

  /// Queue a delete (client-go's Delete). Dropped for a key neither queued
  /// nor known.
  void remove(object_ptr obj) {
    auto k = key_of(obj);
    const bool queued = items_.contains(k);
    if (!queued && (known_ == nullptr || known_->get_by_key(k) == nullptr)) {
      return;
    }
    populated_ = true;
    queue_action(delta_type::deleted, std::move(k), std::move(obj));
    wake();
  }

  /// The newest state this FIFO knows of `key`: its last queued object
  /// (a tombstone's last state), else the known object; null if neither.
  [[nodiscard]] object_ptr latest(const std::string& key) const {
    if (auto it = items_.find(key); it != items_.end() && !it->second.empty()) {
      return it->second.back().obj();
    }
    return known_ != nullptr ? known_->get_by_key(key) : nullptr;
  }

  /// Requeue a delta_list handed out by a pop, unless its key was queued
  /// again meanwhile (then the newer deltas win and `dl` is dropped).
  void add_if_not_present(delta_list<T> dl) {
    populated_ = true;
    if (dl.deltas.empty() || items_.contains(dl.key)) {
      return;
    }
    queue_.push_back(dl.key);
    items_.emplace(std::move(dl.key), std::move(dl.deltas));
    wake();
  }

  /// Ends the FIFO (see the class comment). Idempotent.
  void close() {
    closed_ = true;
    wake();
  }
  [[nodiscard]] bool closed() const noexcept { return closed_; }

  /// Completion signature: void(error_code, delta_list<T>).
  template <class CompletionToken = kube::use_awaitable_t>
  auto async_pop(CompletionToken&& token = {}) {
    return boost::asio::async_initiate<CompletionToken, void(error_code, delta_list<T>)>(
        [this](auto handler) {
          if (waiter_) {
            post_result(std::move(handler), boost::asio::error::in_progress, {});
            return;
          }
          boost::asio::any_io_executor ex = boost::asio::get_associated_executor(handler);
          pop_handler h(std::move(handler));
          if (!queue_.empty() || closed_) {
            deliver_later(std::move(h), std::move(ex));
          } else {
            park(std::move(h), std::move(ex));
          }
        },
        token);
  }

  /// A full relist at `resource_version`: Replaced for each listed object,
  /// tombstones for keys that vanished (see the class comment).
  void replace(std::vector<object_ptr> list, std::string_view resource_version) {
    std::unordered_set<std::string> keys;
    keys.reserve(list.size());
    for (auto& obj : list) {
      auto k = key_of(obj);
      keys.insert(k);
      queue_action(delta_type::replaced, std::move(k), std::move(obj));
    }

    std::size_t queued_deletions = 0;
    // Queued keys missing from the list. Iterating `queue_` by index is safe:
    // queue_action on a key already queued does not touch `queue_`.
    for (std::size_t i = 0, n = queue_.size(); i < n; ++i) {
      const std::string& k = queue_[i];
      if (keys.contains(k)) {
        continue;
      }
      const auto& dl = items_.at(k);
      object_ptr last = dl.back().obj();  // unwraps an earlier tombstone
      ++queued_deletions;
      queue_action(delta_type::deleted, k, deleted_final_state_unknown<T>{k, std::move(last)});
    }
    // Known keys missing from the list with nothing queued: the store has the
    // last state.
    if (known_ != nullptr) {
      for (auto& k : known_->list_keys()) {
        if (keys.contains(k) || items_.contains(k)) {
          continue;
        }
        auto last = known_->get_by_key(k);
        ++queued_deletions;
        auto key_copy = k;
        queue_action(delta_type::deleted, std::move(k),
                     deleted_final_state_unknown<T>{std::move(key_copy), std::move(last)});
      }
    }

    if (!populated_) {
      populated_ = true;
      initial_population_count_ = keys.size() + queued_deletions;
    }
    last_sync_resource_version_ = std::string(resource_version);
    wake();
  }

  /// Queue Sync for every known object with no delta queued (client-go's
  /// Resync). No-op without known objects.
  void resync() {
    if (known_ == nullptr) {
      return;
    }

    for (auto& k : known_->list_keys()) {
      if (items_.contains(k)) {
        continue;
      }
      auto obj = known_->get_by_key(k);
      if (obj == nullptr) {
        continue;
      }
      queue_action(delta_type::sync, std::move(k), std::move(obj));
    }
    wake();
  }

  /// The oldest key with all its deltas, or nothing when empty. The result
  /// owns the deltas: the FIFO forgets the key.
  std::optional<delta_list<T>> try_pop() {
    if (queue_.empty()) {
      return std::nullopt;
    }
    std::string k = std::move(queue_.front());
    queue_.pop_front();
    auto it = items_.find(k);
    delta_list<T> out{std::move(k), std::move(it->second), !has_synced()};
    items_.erase(it);
    if (initial_population_count_ > 0) {
      --initial_population_count_;
    }
    return out;
  }

  [[nodiscard]] bool has_synced() const noexcept { return populated_ && initial_population_count_ == 0; }
  /// Number of keys queued.
  [[nodiscard]] std::size_t size() const noexcept { return queue_.size(); }
  [[nodiscard]] bool empty() const noexcept { return queue_.empty(); }
  /// The deltas queued for `key`, or null.
  [[nodiscard]] const std::vector<delta<T>>* find(const std::string& key) const {
    auto it = items_.find(key);
    return it == items_.end() ? nullptr : &it->second;
  }
  /// Queued keys, oldest first.
  [[nodiscard]] std::vector<std::string> list_keys() const { return {queue_.begin(), queue_.end()}; }
  /// The resource version given to the last `replace`.
  [[nodiscard]] const std::string& last_sync_resource_version() const noexcept { return last_sync_resource_version_; }

private:
  using pop_handler = boost::asio::any_completion_handler<void(error_code, delta_list<T>)>;

  template <class Handler>
  static void post_result(Handler&& h, error_code ec, delta_list<T> dl) {
    auto ex = boost::asio::get_associated_executor(h);
    post_result(ex, std::forward<Handler>(h), ec, std::move(dl));
  }
  template <class Executor, class Handler>
  static void post_result(const Executor& ex, Handler&& h, error_code ec, delta_list<T> dl) {
    boost::asio::post(
        ex, [h = std::forward<Handler>(h), ec, dl = std::move(dl)]() mutable { std::move(h)(ec, std::move(dl)); });
  }

  // Wakes a waiting async_pop, if any. The key is popped only when the
  // consumer's handler runs (on its executor): until then it stays queued,
  // so a delete arriving meanwhile is merged into its deltas, not dropped.
  void wake() {
    if (!waiter_ || (queue_.empty() && !closed_)) {
      return;
    }
    if (waiter_slot_.is_connected()) {
      waiter_slot_.clear();
    }
    waiter_slot_ = {};
    auto h = std::move(waiter_);
    deliver_later(std::move(h), waiter_ex_);
  }

  void deliver_later(pop_handler h, boost::asio::any_io_executor ex) {
    boost::asio::post(ex, [this, h = std::move(h), ex]() mutable {
      if (auto dl = try_pop()) {
        std::move(h)(error_code{}, std::move(*dl));
      } else if (closed_) {
        std::move(h)(error_code(boost::asio::error::eof), delta_list<T>{});
      } else {
        park(std::move(h), std::move(ex));
      }
    });
  }

  void park(pop_handler h, boost::asio::any_io_executor ex) {
    waiter_ex_ = std::move(ex);
    h.swap(waiter_);  // not move-assignment: it recurses in Boost 1.81
    // The type-erased handler forwards cancellation through its own slot.
    waiter_slot_ = waiter_.get_cancellation_slot();
    if (waiter_slot_.is_connected()) {
      waiter_slot_.assign([this](boost::asio::cancellation_type) {
        waiter_slot_ = {};
        auto w = std::move(waiter_);
        post_result(waiter_ex_, std::move(w), boost::asio::error::operation_aborted, {});
      });
    }
  }

  std::string key_of(const object_ptr& obj) const {
    if (obj == nullptr) {
      throw std::invalid_argument("delta_fifo: null object");
    }
    return key_(*obj);
  }

  template <class Obj>
  void queue_action(delta_type type, std::string k, Obj&& obj) {
    auto [it, inserted] = items_.try_emplace(k);
    auto& dl = it->second;
    // Built in place: moving a finished delta into the vector makes g++ 12 at
    // -O3 warn that the variant's unused alternative "may be used uninitialized".
    auto& d = dl.emplace_back();
    d.type = type;
    d.object.template emplace<std::remove_cvref_t<Obj>>(std::forward<Obj>(obj));
    dedup_deletes(dl);
    if (inserted) {
      queue_.push_back(std::move(k));
    }
  }

  // client-go's dedupDeltas/isDeletionDup: only the last two are compared.
  static void dedup_deletes(std::vector<delta<T>>& dl) {
    const std::size_t n = dl.size();
    if (n < 2) {
      return;
    }
    auto& a = dl[n - 2];
    auto& b = dl[n - 1];
    if (a.type != delta_type::deleted || b.type != delta_type::deleted) {
      return;
    }
    if (b.tombstone() == nullptr) {
      a = std::move(b);  // the newer one carries the real final state
    }
    dl.pop_back();
  }

  key_func<T> key_;
  const known_objects<T>* known_;
  std::unordered_map<std::string, std::vector<delta<T>>> items_;
  std::deque<std::string> queue_;  // invariant: holds exactly the keys of items_
  bool populated_ = false;
  std::size_t initial_population_count_ = 0;
  std::string last_sync_resource_version_;
  bool closed_ = false;
  pop_handler waiter_;
  boost::asio::any_io_executor waiter_ex_;
  boost::asio::cancellation_slot waiter_slot_;
};

}  // namespace kube::informer
