#pragma once

// Hashing for the queue's item index. Each item is stored once, in a node
// that also caches its hash's low 32 bits; the index (flat_index) holds
// (those 32 bits, node id) pairs. So an item is hashed once per add()/done()
// call, never again on rehash, and the hash computed on a producer thread
// travels with its message.

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

/// A fast hash of a byte string (wyhash-style multiply-fold over 8-byte
/// words; ~3 ns for a 22-byte key against ~10 ns for std::hash). Only ever
/// used for the queue's own tables, never exposed.
inline std::uint64_t fold_mul(std::uint64_t a, std::uint64_t b) noexcept {
  __extension__ using u128 = unsigned __int128;
  const u128 r = static_cast<u128>(a) * b;
  return static_cast<std::uint64_t>(r) ^ static_cast<std::uint64_t>(r >> 64);
}

inline std::uint64_t load_u64(const char* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline std::uint64_t load_u32(const char* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline std::size_t hash_bytes(const char* p, std::size_t len) noexcept {
  constexpr std::uint64_t k0 = 0xa0761d6478bd642fULL;
  constexpr std::uint64_t k1 = 0xe7037ed1a0b428dbULL;
  constexpr std::uint64_t k2 = 0x8ebc6af09c88c6e3ULL;
  std::uint64_t h = fold_mul(len ^ k0, k2);
  for (; len >= 16; p += 16, len -= 16) h = fold_mul(load_u64(p) ^ k1, load_u64(p + 8) ^ h);
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  if (len >= 8) {
    a = load_u64(p);
    b = load_u64(p + len - 8);
  } else if (len >= 4) {
    a = load_u32(p);
    b = load_u32(p + len - 4);
  } else if (len > 0) {
    a = (std::uint64_t{static_cast<unsigned char>(p[0])} << 16) |
        (std::uint64_t{static_cast<unsigned char>(p[len / 2])} << 8) | static_cast<unsigned char>(p[len - 1]);
  }
  return static_cast<std::size_t>(fold_mul(a ^ k1, b ^ h));
}

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
