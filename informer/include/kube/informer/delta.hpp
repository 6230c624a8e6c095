#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace kube::informer {

/// What happened to an object (client-go's DeltaType).
enum class delta_type : std::uint8_t {
  added,
  updated,
  deleted,
  replaced,  ///< seen again in a relist (the reflector's `replace`)
  sync,      ///< periodic resync of an object already in the cache
};

/// A delete whose final state is unknown: the object vanished from a relist,
/// so the watch event carrying its deletion was missed. `obj` is the last
/// state we knew (from the queue or the cache); it may be stale and, when
/// even that was unknown, null.
template <class T>
struct deleted_final_state_unknown {
  std::string key;
  std::shared_ptr<const T> obj;
};

/// One change: the type and the object (or a tombstone, only for deletes).
template <class T>
struct delta {
  delta_type type = delta_type::added;
  std::variant<std::shared_ptr<const T>, deleted_final_state_unknown<T>> object;

  /// The tombstone, or null if this delta carries the object itself.
  [[nodiscard]] const deleted_final_state_unknown<T>* tombstone() const noexcept {
    return std::get_if<deleted_final_state_unknown<T>>(&object);
  }
  /// The object, unwrapping a tombstone (may be null for a tombstone whose
  /// last state was unknown).
  [[nodiscard]] const std::shared_ptr<const T>& obj() const noexcept {
    if (const auto* t = tombstone()) {
      return t->obj;
    }
    return std::get<std::shared_ptr<const T>>(object);
  }
};

/// All queued changes of one key, oldest first, as handed out by `pop`.
template <class T>
struct delta_list {
  std::string key;
  std::vector<delta<T>> deltas;
  /// True while the first relist has not been fully popped (client-go's
  /// isInInitialList): handlers learn an add came from the initial list.
  bool is_in_initial_list = false;
};

}  // namespace kube::informer
