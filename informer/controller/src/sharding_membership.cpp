// Sharded controllers: the membership rules without I/O
// (kube/controller/sharding/membership.hpp).
#include <kube/controller/sharding/membership.hpp>

#include <kube/resource_version.hpp>

#include <algorithm>
#include <utility>

namespace kube::controller {

std::string encode_view(const std::vector<std::string>& members) {
  std::vector<std::string> m = members;
  std::sort(m.begin(), m.end());
  m.erase(std::unique(m.begin(), m.end()), m.end());
  std::string out;
  for (const auto& s : m) {
    if (s.empty()) continue;
    if (!out.empty()) out += ',';
    out += s;
  }
  return out;
}

shard_membership::shard_membership(std::string identity, std::chrono::milliseconds renew_deadline,
                                   unsigned tokens_per_member)
    : identity_(std::move(identity)),
      renew_deadline_(renew_deadline),
      tokens_(tokens_per_member) {}

void shard_membership::observe(std::vector<shard_lease> leases, time_point now) {
  std::map<std::string, observed, std::less<>> next;
  std::vector<std::string> holders;
  for (auto& l : leases) {
    time_point since = now;
    if (auto it = leases_.find(l.name);
        it != leases_.end() && it->second.lease.resource_version == l.resource_version) {
      since = it->second.since;
    }
    if (!l.holder.empty()) holders.push_back(l.holder);
    auto name = l.name;
    next.insert_or_assign(std::move(name), observed{std::move(l), since});
  }
  leases_ = std::move(next);
  auto view = encode_view(holders);
  if (view != view_) {
    view_ = std::move(view);
    ring_ = hash_ring(std::move(holders), tokens_);
  }
}

void shard_membership::wrote(const std::string& view, const std::string& rv, time_point now) {
  // A renewal keeps the view: only the write that changed it must be
  // visible before agreement (a renewal must not pause the keys).
  if (view != ack_ || ack_rv_.empty()) {
    ack_ = view;
    ack_rv_ = rv;
  }
  last_write_ = now;
}

void shard_membership::left() noexcept {
  ack_.clear();
  ack_rv_.clear();
  last_write_.reset();
}

bool shard_membership::member() const noexcept {
  return last_write_.has_value() && std::binary_search(ring_.members().begin(), ring_.members().end(), identity_);
}

bool shard_membership::agreed(time_point now) const noexcept {
  if (!member() || ack_ != view_ || now - *last_write_ > renew_deadline_) return false;
  for (const auto& [name, o] : leases_) {
    if (o.lease.holder.empty()) continue;
    if (o.lease.view != view_) return false;
    if (o.lease.holder == identity_) {
      // Our informer must not be behind our own acknowledgement (see the
      // guide: a stale copy of our Lease could show an older view).
      const auto c = compare_resource_versions(o.lease.resource_version, ack_rv_);
      if (c ? *c < 0 : o.lease.resource_version != ack_rv_) return false;
    }
  }
  return true;
}

shard_decision shard_membership::decide(std::string_view shard_key, time_point now) const noexcept {
  if (!member() || ring_.owner(shard_key) != identity_) return shard_decision::not_mine;
  return agreed(now) ? shard_decision::mine : shard_decision::waiting;
}

std::vector<shard_lease> shard_membership::expired(time_point now) const {
  std::vector<shard_lease> out;
  for (const auto& [name, o] : leases_) {
    if (o.lease.holder.empty() || o.lease.holder == identity_) continue;
    const auto d = std::chrono::seconds(std::max(1, o.lease.lease_duration_seconds));
    if (now - o.since >= d) out.push_back(o.lease);
  }
  return out;
}

const shard_lease* shard_membership::find(std::string_view name) const noexcept {
  auto it = leases_.find(name);
  return it == leases_.end() ? nullptr : &it->second.lease;
}

}  // namespace kube::controller
