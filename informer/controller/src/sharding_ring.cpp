// Sharded controllers: the stable hash and the consistent-hash ring
// (kube/controller/sharding/hash_ring.hpp).
#include <kube/controller/sharding/hash_ring.hpp>

#include <algorithm>
#include <string>

namespace kube::controller {

std::uint64_t shard_hash(std::string_view s) noexcept {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a 64
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  // splitmix64's finalizer: FNV-1a alone leaves similar strings close.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h;
}

hash_ring::hash_ring(std::vector<std::string> members, unsigned tokens_per_member) {
  std::erase_if(members, [](const std::string& m) { return m.empty(); });
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  members_ = std::move(members);
  const unsigned tokens = std::max(1U, tokens_per_member);
  tokens_.reserve(members_.size() * tokens);
  for (std::uint32_t i = 0; i < members_.size(); ++i) {
    for (unsigned t = 0; t < tokens; ++t) {
      tokens_.emplace_back(shard_hash(members_[i] + "#" + std::to_string(t)), i);
    }
  }
  std::sort(tokens_.begin(), tokens_.end());
}

const std::string& hash_ring::owner(std::string_view key) const noexcept {
  static const std::string none;
  if (tokens_.empty()) return none;
  const auto h = shard_hash(key);
  auto it = std::lower_bound(tokens_.begin(), tokens_.end(), std::pair<std::uint64_t, std::uint32_t>{h, 0});
  if (it == tokens_.end()) it = tokens_.begin();
  return members_[it->second];
}

}  // namespace kube::controller
