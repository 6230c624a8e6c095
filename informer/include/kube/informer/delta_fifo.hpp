#pragma once

#include <kube/informer/delta.hpp>
#include <kube/informer/key_func.hpp>
#include <kube/informer/known_objects.hpp>

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
/// Thread safety: none, by design. The FIFO is confined to one
/// executor/strand where the producer (reflector) and the consumer
/// (processor) coroutines run, so the hot path takes no lock and no atomic.
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
      : key_(key ? std::move(key) : default_key_func<T>()), known_(known) {
    if (!key_) {
      throw std::invalid_argument("delta_fifo: a key function is required for this object type");
    }
  }

  void add(object_ptr obj) {
    populated_ = true;
    auto k = key_of(obj);
    queue_action(delta_type::added, std::move(k), std::move(obj));
  }

  void update(object_ptr obj) {
    populated_ = true;
    auto k = key_of(obj);
    queue_action(delta_type::updated, std::move(k), std::move(obj));
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
        queue_action(delta_type::deleted, std::move(k), deleted_final_state_unknown<T>{std::move(key_copy), std::move(last)});
      }
    }

    if (!populated_) {
      populated_ = true;
      initial_population_count_ = keys.size() + queued_deletions;
    }
    last_sync_resource_version_ = std::string(resource_version);
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
    dl.push_back(delta<T>{type, std::forward<Obj>(obj)});
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
};

} // namespace kube::informer
