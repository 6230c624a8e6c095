#pragma once

// Sharded controllers: the stable hash and the consistent-hash ring that
// assigns keys to replicas. The overview is at the top of
// <kube/controller/sharding.hpp>.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kube::controller {

/// A stable 64-bit hash of a string (FNV-1a, then a mixing finalizer): the
/// same in every process, build and platform, which a ring shared by
/// replicas needs (std::hash promises none of that).
[[nodiscard]] std::uint64_t shard_hash(std::string_view s) noexcept;

/// Consistent hashing over members, with `tokens_per_member` virtual nodes
/// each (the key's owner is the member of the first token at or after the
/// key's hash, wrapping around). Adding or removing one member moves only
/// the keys that member gains or loses. A plain value.
class hash_ring {
public:
  static constexpr unsigned default_tokens = 100;

  hash_ring() = default;
  /// Duplicates and empty names are ignored.
  explicit hash_ring(std::vector<std::string> members, unsigned tokens_per_member = default_tokens);

  /// The member owning `key` ("" when the ring is empty).
  [[nodiscard]] const std::string& owner(std::string_view key) const noexcept;
  /// Sorted, unique.
  [[nodiscard]] const std::vector<std::string>& members() const noexcept { return members_; }
  [[nodiscard]] bool empty() const noexcept { return members_.empty(); }

private:
  std::vector<std::string> members_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> tokens_;  // (hash, index into members_), sorted
};

}  // namespace kube::controller
