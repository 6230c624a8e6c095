#pragma once

// Hashing for the queue's item index. Each item is stored once, in a node
// that also caches its hash's low 32 bits; the index (flat_index) holds
// (those 32 bits, node id) pairs. So an item is hashed once per add()/done()
// call, never again on rehash, and the hash computed on a producer thread
// travels with its message.

#include <kube/base/hash_bytes.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>

namespace kube::workqueue::detail {

/// Spreads a user hash (std::hash of an integer is the identity) so the
/// index can use its low bits as is.
inline std::size_t mix_hash(std::size_t h) noexcept {
  std::uint64_t x = h;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  return static_cast<std::size_t>(x);
}

// hash_bytes, load_u64: kube/base/hash_bytes.hpp (the text pool of the
// client's codecs uses the same hash).
using kube::base::hash_bytes;
using kube::base::load_u64;

/// Whether the queue may hash T with hash_bytes instead of the user's Hash:
/// only for std::string with the default std::hash and plain equality, where
/// "equal keys hash equal" holds for any function of the bytes. A user-given
/// Hash or KeyEqual is always used as given.
template <class T, class Hash, class KeyEqual>
inline constexpr bool own_string_hash = std::is_same_v<T, std::string>&& std::is_same_v<Hash, std::hash<std::string>> &&
                                        (std::is_same_v<KeyEqual, std::equal_to<std::string>> ||
                                         std::is_same_v<KeyEqual, std::equal_to<>>);

/// Byte equality of two strings, inlined word by word for short keys (a
/// probe compares only after the full 64-bit hashes matched, so it is
/// nearly always confirming a hit, and a libc memcmp call costs more than
/// the comparison itself).
inline bool same_bytes(const char* p, std::size_t len, const char* q, std::size_t q_len) noexcept {
  if (len != q_len) return false;
  if (len < 8) return len == 0 || std::memcmp(p, q, len) == 0;
  if (len > 32) return std::memcmp(p, q, len) == 0;
  std::uint64_t diff = 0;
  for (std::size_t i = 0; i + 8 <= len; i += 8) diff |= load_u64(p + i) ^ load_u64(q + i);
  diff |= load_u64(p + len - 8) ^ load_u64(q + len - 8);
  return diff == 0;
}

inline bool same_bytes(const std::string& a, const std::string& b) noexcept {
  return same_bytes(a.data(), a.size(), b.data(), b.size());
}

/// Hashing of items for the queue's index (flat_index): the queue's own
/// byte hash for plain std::string keys, the user's Hash otherwise
/// (equality: node_item). The index picks a slot with the hash's low bits.
/// hash_bytes ends in a multiply-fold, whose low bits already depend on every
/// input bit, so its result is used as is (mixing it again was two more
/// dependent multiplies, ~3.5 ns of a ~19 ns re-add of a queued key); a
/// user's hash is mixed, since std::hash of an integer is the identity.
template <class T, class Hash, class KeyEqual>
struct item_traits {
  static std::size_t hash(const T& item) {
    if constexpr (own_string_hash<T, Hash, KeyEqual>) {
      return hash_bytes(item.data(), item.size());
    } else {
      return mix_hash(Hash{}(item));
    }
  }
};

}  // namespace kube::workqueue::detail
