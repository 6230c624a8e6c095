#pragma once

// Sharded controllers: the membership rules without I/O (shard_membership)
// over the observed membership Leases (shard_lease). The overview, and the
// handover rules these implement, are at the top of
// <kube/controller/sharding.hpp>.

#include <kube/controller/sharding/hash_ring.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kube::controller {

/// One membership Lease as observed.
struct shard_lease {
  std::string name;
  std::string holder;  ///< spec.holderIdentity ("" : released or removed)
  int lease_duration_seconds = 0;
  std::string view;              ///< the acknowledged view ("" : none yet)
  std::string resource_version;  ///< changes with every write (renewals too)
};

/// The view of a set of holders: the sorted identities joined by ','.
[[nodiscard]] std::string encode_view(const std::vector<std::string>& members);

/// What a replica may do with a key now.
enum class shard_decision {
  mine,     ///< start it
  waiting,  ///< it is ours under the current view, which not everybody has acknowledged yet
  not_mine  ///< another replica's (or this replica is not a member)
};

/// The membership rules without I/O, on an explicit monotonic time:
/// the Leases observed, this replica's own writes, and the decisions.
/// shard_coordinator drives it; tests drive it with a manual clock.
/// Thread safety: none (a plain value).
class shard_membership {
public:
  using time_point = std::chrono::steady_clock::time_point;

  shard_membership(std::string identity, std::chrono::milliseconds renew_deadline,
                   unsigned tokens_per_member = hash_ring::default_tokens);

  /// The ring's Leases as observed at `now` (all of them, each time).
  /// A Lease whose resourceVersion differs from the last observation is
  /// observed anew (its expiry counts from now).
  void observe(std::vector<shard_lease> leases, time_point now);
  /// This replica wrote its Lease at `now` (joined, renewed or
  /// acknowledged `view`); `rv` is the written object's resourceVersion.
  void wrote(const std::string& view, const std::string& rv, time_point now);
  /// This replica's Lease was emptied by another or it released it: it is
  /// not a member until it writes again.
  void left() noexcept;

  /// The current view (holders of the observed Leases) and its ring.
  [[nodiscard]] const hash_ring& ring() const noexcept { return ring_; }
  [[nodiscard]] const std::string& view() const noexcept { return view_; }
  /// The view this replica acknowledged last ("" : none).
  [[nodiscard]] const std::string& acknowledged() const noexcept { return ack_; }
  /// The current view differs from the acknowledged one: acknowledge it
  /// once no running key is lost by it.
  [[nodiscard]] bool needs_acknowledgement() const noexcept { return member() && view_ != ack_; }
  /// This replica is in the current view.
  [[nodiscard]] bool member() const noexcept;
  /// This replica wrote its Lease since it last left (it may not be in the
  /// view yet: the informer may not have shown the write).
  [[nodiscard]] bool joined() const noexcept { return last_write_.has_value(); }
  /// Every member of the current view acknowledged it, this replica's last
  /// acknowledgement is visible, and it wrote its Lease within
  /// renew_deadline.
  [[nodiscard]] bool agreed(time_point now) const noexcept;
  /// The owner of `shard_key` under the current view ("" : none).
  [[nodiscard]] const std::string& owner(std::string_view shard_key) const noexcept { return ring_.owner(shard_key); }
  [[nodiscard]] shard_decision decide(std::string_view shard_key, time_point now) const noexcept;

  /// Held Leases of others that did not change for their duration (to be
  /// emptied, guarded by the resourceVersion in the returned record).
  [[nodiscard]] std::vector<shard_lease> expired(time_point now) const;
  /// The Lease observed for `name`, if any.
  [[nodiscard]] const shard_lease* find(std::string_view name) const noexcept;
  [[nodiscard]] const std::string& identity() const noexcept { return identity_; }

private:
  struct observed {
    shard_lease lease;
    time_point since;
  };
  std::string identity_;
  std::chrono::milliseconds renew_deadline_;
  unsigned tokens_;
  std::map<std::string, observed, std::less<>> leases_;  // by Lease name
  hash_ring ring_;
  std::string view_;
  std::string ack_;     // last acknowledged view
  std::string ack_rv_;  // resourceVersion of the write that set it
  std::optional<time_point> last_write_;
};

}  // namespace kube::controller
