#pragma once

#include <memory>
#include <string>
#include <vector>

namespace kube::informer {

/// What the DeltaFIFO needs to know about the cache it feeds (client-go's
/// KeyListerGetter): used by `replace` to find tombstones, by `remove` to drop
/// deletes of unknown keys and by `resync`. `kube::informer::indexer`
/// implements it.
template <class T>
class known_objects {
public:
  virtual ~known_objects() = default;
  [[nodiscard]] virtual std::vector<std::string> list_keys() const = 0;
  /// The cached object, or null if the key is unknown.
  [[nodiscard]] virtual std::shared_ptr<const T> get_by_key(const std::string& key) const = 0;

protected:
  known_objects() = default;
  known_objects(const known_objects&) = default;
  known_objects& operator=(const known_objects&) = default;
};

}  // namespace kube::informer
