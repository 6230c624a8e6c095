#pragma once

#include <kube/informer/key_func.hpp>
#include <kube/informer/known_objects.hpp>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace kube::informer {

/// Name of the built-in index over `namespace_()` (client-go's NamespaceIndex).
inline constexpr std::string_view namespace_index = "namespace";

/// An index function: the index values of an object (none, one or several).
template <class T>
using index_func = std::function<std::vector<std::string>(const T&)>;

/// Index name -> index function (client-go's Indexers).
template <class T>
using index_funcs = std::map<std::string, index_func<T>, std::less<>>;

/// The informer's cache (client-go's Indexer over a ThreadSafeStore): key ->
/// `std::shared_ptr<const T>` plus named indexes, each mapping an index value
/// to the set of keys whose object produced it.
///
/// The namespace index (`namespace_index`) is built in when T has object
/// metadata (`has_object_meta`). Indexes added with `add_indexers` after
/// objects exist are built from the current objects.
///
/// Thread safety: one writer (the informer's strand) and any number of
/// readers on any threads. A `std::shared_mutex` guards the maps; writers
/// hold it exclusively, readers shared, and only around the map operations:
/// keys and index values are computed before locking, and results are
/// copies (shared_ptrs to immutable objects, vectors of keys), so nothing a
/// caller holds can change under it. Why a lock and not copy-on-write
/// snapshots: an update touches one key and a few index entries; copying the
/// maps per write (or building persistent maps) would cost O(n) or a lot of
/// code per event, while a shared lock costs two atomic operations per read
/// and readers never block each other. The lock-free rule applies to the
/// DeltaFIFO path, which never touches this lock except through
/// `known_objects` reads on the writer's own strand.
///
/// Errors: `by_index`, `index_keys`, `list_index_values` and `index` throw
/// `std::invalid_argument` for an unknown index name; `add_indexers` throws
/// `std::invalid_argument` when a name already exists (nothing is added).
/// Key and index functions' exceptions propagate with the cache unchanged.
template <class T>
class indexer final : public known_objects<T> {
public:
  using object_ptr = std::shared_ptr<const T>;

  /// An empty `key` means `default_key_func<T>()`; std::invalid_argument if
  /// T has no default either, or if `extra` redefines the namespace index.
  explicit indexer(key_func<T> key = default_key_func<T>(), index_funcs<T> extra = {})
      : key_(key ? std::move(key) : default_key_func<T>()) {
    if (!key_) {
      throw std::invalid_argument("indexer: a key function is required for this object type");
    }
    if constexpr (has_object_meta<T>) {
      funcs_.emplace(std::string(namespace_index), [](const T& o) {
        const auto ns = o.namespace_();
        return std::vector<std::string>{std::string(ns)};
      });
    }
    for (auto& [name, fn] : extra) {
      if (!funcs_.emplace(name, std::move(fn)).second) {
        throw std::invalid_argument("indexer: index \"" + name + "\" is defined twice");
      }
    }
    for (auto& [name, fn] : funcs_) {
      indices_[name];
    }
  }

  /// Add or replace the object under its key (client-go Add/Update are the
  /// same operation).
  void add(object_ptr obj) { upsert(std::move(obj)); }
  void update(object_ptr obj) { upsert(std::move(obj)); }

  /// Remove the object's key; no-op if absent.
  void remove(const object_ptr& obj) { remove_by_key(key_of(obj)); }

  void remove_by_key(const std::string& k) {
    std::unique_lock lock(mutex_);
    auto it = items_.find(k);
    if (it == items_.end()) {
      return;
    }
    // The old object is immutable and stays alive via `it`, so its index
    // values are recomputed here; index functions must be pure.
    drop_from_indices(k, *it->second);
    items_.erase(it);
  }

  /// Swap the whole content for `list` (a relist), rebuilding the indexes.
  void replace(std::vector<object_ptr> list) {
    std::unordered_map<std::string, object_ptr> items;
    items.reserve(list.size());
    for (auto& obj : list) {
      auto k = key_of(obj);
      items.insert_or_assign(std::move(k), std::move(obj));
    }
    std::unique_lock lock(mutex_);
    std::unordered_map<std::string, index_map> indices;
    for (auto& [name, fn] : funcs_) {
      auto& idx = indices[name];
      for (auto& [k, obj] : items) {
        for (auto& v : fn(*obj)) {
          idx[std::move(v)].insert(k);
        }
      }
    }
    items_ = std::move(items);
    indices_ = std::move(indices);
  }

  /// Add index functions, building them from the current objects.
  void add_indexers(index_funcs<T> more) {
    std::unique_lock lock(mutex_);
    for (auto& [name, fn] : more) {
      if (funcs_.contains(name)) {
        throw std::invalid_argument("indexer: index \"" + name + "\" already exists");
      }
    }
    std::unordered_map<std::string, index_map> built;
    for (auto& [name, fn] : more) {
      auto& idx = built[name];
      for (auto& [k, obj] : items_) {
        for (auto& v : fn(*obj)) {
          idx[std::move(v)].insert(k);
        }
      }
    }
    for (auto& [name, fn] : more) {
      indices_[name] = std::move(built[name]);
      funcs_.emplace(name, std::move(fn));
    }
  }

  [[nodiscard]] object_ptr get_by_key(const std::string& k) const override {
    std::shared_lock lock(mutex_);
    auto it = items_.find(k);
    return it == items_.end() ? nullptr : it->second;
  }
  /// The cached object with `obj`'s key.
  [[nodiscard]] object_ptr get(const T& obj) const { return get_by_key(key_(obj)); }

  [[nodiscard]] std::vector<std::string> list_keys() const override {
    std::shared_lock lock(mutex_);
    std::vector<std::string> out;
    out.reserve(items_.size());
    for (auto& [k, obj] : items_) {
      out.push_back(k);
    }
    return out;
  }
  [[nodiscard]] std::vector<object_ptr> list() const {
    std::shared_lock lock(mutex_);
    std::vector<object_ptr> out;
    out.reserve(items_.size());
    for (auto& [k, obj] : items_) {
      out.push_back(obj);
    }
    return out;
  }
  [[nodiscard]] std::size_t size() const {
    std::shared_lock lock(mutex_);
    return items_.size();
  }

  /// Objects whose index `index_name` contains `value`.
  [[nodiscard]] std::vector<object_ptr> by_index(std::string_view index_name, const std::string& value) const {
    std::shared_lock lock(mutex_);
    std::vector<object_ptr> out;
    if (const auto* keys = find_keys(index_name, value)) {
      out.reserve(keys->size());
      for (auto& k : *keys) {
        out.push_back(items_.at(k));
      }
    }
    return out;
  }
  /// Keys whose object's index `index_name` contains `value`.
  [[nodiscard]] std::vector<std::string> index_keys(std::string_view index_name, const std::string& value) const {
    std::shared_lock lock(mutex_);
    std::vector<std::string> out;
    if (const auto* keys = find_keys(index_name, value)) {
      out.assign(keys->begin(), keys->end());
    }
    return out;
  }
  /// All values present in index `index_name`.
  [[nodiscard]] std::vector<std::string> list_index_values(std::string_view index_name) const {
    std::shared_lock lock(mutex_);
    const auto& idx = index_of(index_name);
    std::vector<std::string> out;
    out.reserve(idx.size());
    for (auto& [v, keys] : idx) {
      out.push_back(v);
    }
    return out;
  }
  /// Objects sharing at least one value of index `index_name` with `obj`
  /// (client-go's Index), each once.
  [[nodiscard]] std::vector<object_ptr> index(std::string_view index_name, const T& obj) const {
    std::shared_lock lock(mutex_);
    const auto& fn = func_of(index_name);
    const auto& idx = index_of(index_name);
    std::unordered_set<std::string> keys;
    for (auto& v : fn(obj)) {
      if (auto it = idx.find(v); it != idx.end()) {
        keys.insert(it->second.begin(), it->second.end());
      }
    }
    std::vector<object_ptr> out;
    out.reserve(keys.size());
    for (auto& k : keys) {
      out.push_back(items_.at(k));
    }
    return out;
  }

private:
  using index_map = std::unordered_map<std::string, std::unordered_set<std::string>>;

  std::string key_of(const object_ptr& obj) const {
    if (obj == nullptr) {
      throw std::invalid_argument("indexer: null object");
    }
    return key_(*obj);
  }

  void upsert(object_ptr obj) {
    auto k = key_of(obj);
    // Compute the new index values before locking (writers are one strand,
    // so funcs_ cannot change meanwhile).
    struct index_values {
      const std::string* name;
      const index_func<T>* fn;
      std::vector<std::string> values;
    };
    std::vector<index_values> values;
    values.reserve(funcs_.size());
    for (auto& [name, fn] : funcs_) {
      values.push_back({&name, &fn, fn(*obj)});
    }
    std::unique_lock lock(mutex_);
    auto [it, inserted] = items_.try_emplace(k);
    for (auto& [name, fn, vals] : values) {
      auto& idx = indices_[*name];
      if (!inserted) {
        auto old = (*fn)(*it->second);
        // The common update (a namespace index, a label that did not
        // change): the key stays where it is, as client-go's store does.
        if (old == vals) {
          continue;
        }
        drop_from_index(idx, k, old);
      }
      for (auto& v : vals) {
        idx[std::move(v)].insert(k);
      }
    }
    it->second = std::move(obj);
  }

  // Caller holds the exclusive lock.
  void drop_from_indices(const std::string& k, const T& old) {
    for (auto& [name, fn] : funcs_) {
      drop_from_index(indices_[name], k, fn(old));
    }
  }

  // Caller holds the exclusive lock.
  static void drop_from_index(index_map& idx, const std::string& k, const std::vector<std::string>& values) {
    for (const auto& v : values) {
      auto it = idx.find(v);
      if (it == idx.end()) {
        continue;
      }
      it->second.erase(k);
      if (it->second.empty()) {
        idx.erase(it);  // keep list_index_values free of dead values
      }
    }
  }

  const index_func<T>& func_of(std::string_view name) const {
    auto it = funcs_.find(name);
    if (it == funcs_.end()) {
      throw std::invalid_argument("indexer: no index named \"" + std::string(name) + "\"");
    }
    return it->second;
  }
  const index_map& index_of(std::string_view name) const {
    func_of(name);  // throws for an unknown name
    return indices_.at(std::string(name));
  }
  const std::unordered_set<std::string>* find_keys(std::string_view name, const std::string& value) const {
    const auto& idx = index_of(name);
    auto it = idx.find(value);
    return it == idx.end() ? nullptr : &it->second;
  }

  key_func<T> key_;
  mutable std::shared_mutex mutex_;
  index_funcs<T> funcs_;  // written only under the exclusive lock
  std::unordered_map<std::string, object_ptr> items_;
  std::unordered_map<std::string, index_map> indices_;  // index name -> value -> keys
};

}  // namespace kube::informer
