#pragma once

// Per-item failure counts shared by the per-item limiters.

#include <boost/unordered/unordered_flat_map.hpp>

#include <functional>

namespace kube::workqueue::detail {

template <class T, class Hash = std::hash<T>, class KeyEqual = std::equal_to<T>>
class item_counter {
public:
  /// Returns the count before incrementing.
  int increment(const T& item) { return counts_[item]++; }
  [[nodiscard]] int get(const T& item) const {
    auto it = counts_.find(item);
    return it == counts_.end() ? 0 : it->second;
  }
  void erase(const T& item) { counts_.erase(item); }

private:
  boost::unordered_flat_map<T, int, Hash, KeyEqual> counts_;
};

}  // namespace kube::workqueue::detail
