#pragma once

// Hashing shared by the queue's item index and the delay heap. Each item is
// stored once, in a heap-allocated node that also caches its hash; the
// indexes are flat sets of node pointers looked up by (item, hash). So an
// item is hashed once per add()/done() call, never again on rehash, and the
// hash computed on a producer thread travels with the node.

#include <boost/unordered/unordered_flat_set.hpp>

#include <cstddef>
#include <cstdint>

namespace kube::workqueue::detail {

/// A lookup key: the item and its (mixed) hash.
template <class T>
struct key_ref {
  const T* item;
  std::size_t hash;
};

/// Spreads a user hash (std::hash of an integer is the identity) so the flat
/// set can use it as is.
inline std::size_t mix_hash(std::size_t h) noexcept {
  std::uint64_t x = h;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  return static_cast<std::size_t>(x);
}

/// Hasher/equality for `boost::unordered_flat_set<Node*>` where Node has
/// `item` and `hash`; transparent over key_ref<T>.
template <class T, class Hash, class KeyEqual, class Node>
struct node_traits {
  struct hasher {
    using is_transparent = void;
    using is_avalanching = void;  // the cached hash is already mixed
    std::size_t operator()(const Node* n) const noexcept { return n->hash; }
    std::size_t operator()(const key_ref<T>& k) const noexcept { return k.hash; }
  };
  struct key_equal {
    using is_transparent = void;
    [[no_unique_address]] KeyEqual eq{};
    bool operator()(const Node* a, const Node* b) const { return a == b || eq(a->item, b->item); }
    bool operator()(const key_ref<T>& k, const Node* n) const { return eq(*k.item, n->item); }
    bool operator()(const Node* n, const key_ref<T>& k) const { return eq(n->item, *k.item); }
  };
  using set = boost::unordered_flat_set<Node*, hasher, key_equal>;

  static std::size_t hash(const T& item) { return mix_hash(Hash{}(item)); }
};

}  // namespace kube::workqueue::detail
