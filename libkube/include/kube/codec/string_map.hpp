#pragma once

// kube::string_map<T>: the C++ type of a Kubernetes map field (a schema with
// additionalProperties: labels, annotations, resource lists, ConfigMap data).
//
// A sorted vector of (key, value) pairs with std::map's interface for the
// operations such fields see: lookup by any string-like key, operator[], at,
// insert/emplace/try_emplace/insert_or_assign, erase, ordered iteration, ==.
// Why not std::map: a std::map entry is a separate 96-byte tree node plus
// malloc's header; here an entry is the pair itself (64 bytes for two
// strings) in one block per map. An informer caching 10,000 pods keeps about
// 1 KB less per pod (measured with the informer benchmark, docs/performance.md,
// when map fields moved from std::map to this type). Lookup is a binary
// search over the few entries such maps hold.
//
// Differences from std::map a caller can notice:
// - Inserting or erasing invalidates iterators and references to entries
//   (as for std::vector); a lookup does not.
// - value_type is std::pair<std::string, T>: the key is not const, but
//   changing a key through an iterator breaks the ordering; do not.
// - Inserting in the middle moves the later entries (maps here are small);
//   the decoders fill a map whole, in O(n log n) whatever the key order.
// A std::map<std::string, T> converts implicitly, so `labels = std::map{...}`
// and comparisons against a std::map keep compiling.
//
// Thread safety: as a standard container (concurrent const use is safe).

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kube {

template <class T>
class string_map {
public:
  using key_type = std::string;
  using mapped_type = T;
  using value_type = std::pair<std::string, T>;
  using container_type = std::vector<value_type>;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = value_type&;
  using const_reference = const value_type&;
  using iterator = typename container_type::iterator;
  using const_iterator = typename container_type::const_iterator;
  using reverse_iterator = typename container_type::reverse_iterator;
  using const_reverse_iterator = typename container_type::const_reverse_iterator;

  string_map() = default;
  /// Later duplicates of a key are dropped, as std::map's constructor does.
  string_map(std::initializer_list<value_type> init) { assign_range(init.begin(), init.end()); }
  template <std::input_iterator InputIt>
  string_map(InputIt first, InputIt last) {
    assign_range(first, last);
  }
  template <class Compare, class Alloc>
  string_map(const std::map<std::string, T, Compare, Alloc>& m)  // NOLINT(google-explicit-constructor)
  {
    assign_range(m.begin(), m.end());
  }
  string_map& operator=(std::initializer_list<value_type> init) {
    items_.clear();
    assign_range(init.begin(), init.end());
    return *this;
  }

  // Iterators, in key order.
  [[nodiscard]] iterator begin() noexcept { return items_.begin(); }
  [[nodiscard]] iterator end() noexcept { return items_.end(); }
  [[nodiscard]] const_iterator begin() const noexcept { return items_.begin(); }
  [[nodiscard]] const_iterator end() const noexcept { return items_.end(); }
  [[nodiscard]] const_iterator cbegin() const noexcept { return items_.cbegin(); }
  [[nodiscard]] const_iterator cend() const noexcept { return items_.cend(); }
  [[nodiscard]] reverse_iterator rbegin() noexcept { return items_.rbegin(); }
  [[nodiscard]] reverse_iterator rend() noexcept { return items_.rend(); }
  [[nodiscard]] const_reverse_iterator rbegin() const noexcept { return items_.rbegin(); }
  [[nodiscard]] const_reverse_iterator rend() const noexcept { return items_.rend(); }

  [[nodiscard]] bool empty() const noexcept { return items_.empty(); }
  [[nodiscard]] size_type size() const noexcept { return items_.size(); }
  [[nodiscard]] size_type capacity() const noexcept { return items_.capacity(); }
  void reserve(size_type n) { items_.reserve(n); }
  void shrink_to_fit() { items_.shrink_to_fit(); }

  // Lookup, by any key convertible to std::string_view.
  [[nodiscard]] iterator lower_bound(std::string_view key) { return items_.begin() + lower_index(key); }
  [[nodiscard]] const_iterator lower_bound(std::string_view key) const { return items_.begin() + lower_index(key); }
  [[nodiscard]] iterator find(std::string_view key) {
    auto it = lower_bound(key);
    return it != items_.end() && it->first == key ? it : items_.end();
  }
  [[nodiscard]] const_iterator find(std::string_view key) const {
    auto it = lower_bound(key);
    return it != items_.end() && it->first == key ? it : items_.end();
  }
  [[nodiscard]] bool contains(std::string_view key) const { return find(key) != end(); }
  [[nodiscard]] size_type count(std::string_view key) const { return contains(key) ? 1 : 0; }
  /// The value of `key`; std::out_of_range naming the key when absent.
  [[nodiscard]] T& at(std::string_view key) {
    auto it = find(key);
    if (it == end()) throw_missing(key);
    return it->second;
  }
  [[nodiscard]] const T& at(std::string_view key) const {
    auto it = find(key);
    if (it == end()) throw_missing(key);
    return it->second;
  }
  /// The value of `key`, inserted value-initialized when absent.
  T& operator[](std::string_view key) { return try_emplace(key).first->second; }

  // Modifiers. Each keeps the entries sorted and keys unique.
  /// Inserts (key, T(args...)) when `key` is absent; `args` are untouched
  /// otherwise. An rvalue std::string key is moved in.
  template <class K, class... Args>
    requires std::convertible_to<const K&, std::string_view> std::pair<iterator, bool> try_emplace(K&& key,
                                                                                                   Args&&... args) {
      auto it = lower_bound(std::string_view(key));
      if (it != items_.end() && std::string_view(it->first) == std::string_view(key)) return {it, false};
      it = items_.emplace(it, std::piecewise_construct, std::forward_as_tuple(std::forward<K>(key)),
                          std::forward_as_tuple(std::forward<Args>(args)...));
      return {it, true};
    }
  /// As std::map::emplace(key, args...): no change when the key exists.
  template <class K, class... Args>
  std::pair<iterator, bool> emplace(K&& key, Args&&... args) {
    return try_emplace(std::forward<K>(key), std::forward<Args>(args)...);
  }
  std::pair<iterator, bool> insert(const value_type& v) { return try_emplace(v.first, v.second); }
  std::pair<iterator, bool> insert(value_type&& v) { return try_emplace(std::move(v.first), std::move(v.second)); }
  template <std::input_iterator InputIt>
  void insert(InputIt first, InputIt last) {
    for (; first != last; ++first) insert(value_type(*first));
  }
  template <class K, class M>
    requires std::convertible_to<const K&, std::string_view> std::pair<iterator, bool> insert_or_assign(K&& key,
                                                                                                        M&& value) {
      auto it = find(std::string_view(key));
      if (it != items_.end()) {
        it->second = std::forward<M>(value);
        return {it, false};
      }
      return try_emplace(std::forward<K>(key), std::forward<M>(value));
    }
  size_type erase(std::string_view key) {
    auto it = find(key);
    if (it == end()) return 0;
    items_.erase(it);
    return 1;
  }
  iterator erase(const_iterator pos) { return items_.erase(pos); }
  iterator erase(const_iterator first, const_iterator last) { return items_.erase(first, last); }
  void clear() noexcept { items_.clear(); }
  void swap(string_map& o) noexcept { items_.swap(o.items_); }

  /// For decoders: replaces the contents with the entries of [first, last),
  /// moved, allocating once. Entries are kept in key order; of two with the
  /// same key the later one wins (as a JSON object decodes). O(n) for keys
  /// in order (as Go writes them), O(n log n) at worst.
  template <std::random_access_iterator It>
  void assign_moved(It first, It last) {
    items_.clear();
    items_.reserve(static_cast<size_type>(last - first));
    for (; first != last; ++first) items_.emplace_back(std::move(first->first), std::move(first->second));
    restore_order();
  }
  /// For decoders that see one entry at a time (protobuf map entries, which
  /// may come in any order and between other fields): appends (key, T{})
  /// without looking for the key, and gives its value to fill. The map is out
  /// of order until restore_order(), which must come before any other use.
  T& decode_append(std::string_view key) { return items_.emplace_back(std::string(key), T{}).second; }
  /// Sorts what decode_append added, keeping the last of each key, and
  /// drops spare capacity. O(n) when the keys came in order.
  void restore_order() {
    bool ordered = true;
    for (size_type i = 1; i < items_.size() && ordered; ++i) ordered = key_less(items_[i - 1], items_[i]);
    if (!ordered) {
      std::stable_sort(items_.begin(), items_.end(), key_less);
      auto out = items_.begin();
      for (auto it = items_.begin(); it != items_.end();) {
        auto next = it + 1;
        while (next != items_.end() && next->first == it->first) ++next;
        if (out != next - 1) *out = std::move(*(next - 1));  // the last of equal keys wins
        ++out;
        it = next;
      }
      items_.erase(out, items_.end());
    }
    if (items_.capacity() != items_.size()) items_.shrink_to_fit();
  }

  friend bool operator==(const string_map& a, const string_map& b) { return a.items_ == b.items_; }
  friend void swap(string_map& a, string_map& b) noexcept { a.swap(b); }

private:
  static bool key_less(const value_type& a, const value_type& b) {
    return std::string_view(a.first) < std::string_view(b.first);
  }
  template <class It>
  void assign_range(It first, It last) {
    for (; first != last; ++first) {
      const auto& [k, v] = *first;
      try_emplace(k, v);
    }
  }
  /// Where `key` is or would go. A key after the last one (keys arriving in
  /// order, as the API server and Go write them) is answered without a
  /// search, so filling a map from sorted input appends in constant time.
  [[nodiscard]] size_type lower_index(std::string_view key) const {
    if (items_.empty() || std::string_view(items_.back().first) < key) return items_.size();
    auto it = std::lower_bound(items_.begin(), items_.end(), key,
                               [](const value_type& e, std::string_view k) { return std::string_view(e.first) < k; });
    return static_cast<size_type>(it - items_.begin());
  }
  [[noreturn]] static void throw_missing(std::string_view key) {
    throw std::out_of_range("kube::string_map: no key \"" + std::string(key) + "\"");
  }

  container_type items_;
};

}  // namespace kube
