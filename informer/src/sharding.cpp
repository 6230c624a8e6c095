// Sharded controllers: the hash ring, the membership rules and the
// coordinator that holds a replica's Lease (see sharding.hpp).
#include <kube/controller/sharding.hpp>

#include "exception_text.hpp"

#include <kube/controller/reconcile.hpp>

#include <kube/base/strand.hpp>
#include <kube/detail/spawn.hpp>
#include <kube/dynamic/dynamic_api.hpp>
#include <kube/exception.hpp>
#include <kube/informer/dynamic_lister_watcher.hpp>
#include <kube/informer/metadata_lister_watcher.hpp>
#include <kube/informer/shared_informer.hpp>
#include <kube/resource_version.hpp>
#include <kube/rest/separate_client.hpp>
#include <kube/tools/leader_election.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <set>

namespace kube::controller {

namespace asio = boost::asio;
namespace json = boost::json;

// ---- the ring -----------------------------------------------------------------

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

// ---- parameters -------------------------------------------------------------------

namespace {

std::string ms(std::chrono::milliseconds d) { return std::to_string(d.count()) + "ms"; }

// A label value that can also be part of a Lease name (a DNS subdomain):
// 1-63 characters, dot-separated parts of [a-z0-9-] that start and end
// alphanumeric.
bool name_ok(std::string_view v) {
  if (v.empty() || v.size() > 63) return false;
  auto alnum = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0 || (c >= 'a' && c <= 'z'); };
  std::size_t start = 0;
  for (;;) {
    const auto dot = v.find('.', start);
    const auto part = v.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || !alnum(part.front()) || !alnum(part.back())) return false;
    if (!std::all_of(part.begin(), part.end(), [&](char c) { return alnum(c) || c == '-'; })) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

void validate(const sharding_params& p) {
  std::string problems;
  auto bad = [&](const std::string& s) {
    if (!problems.empty()) problems += "; ";
    problems += s;
  };
  if (!name_ok(p.ring))
    bad("ring \"" + p.ring +
        "\" must be 1-63 characters of [a-z0-9.-], each dot-separated part starting and ending "
        "alphanumeric");
  if (p.lease_namespace.empty()) bad("lease_namespace is empty");
  if (!name_ok(p.identity))
    bad("identity \"" + p.identity +
        "\" must be 1-63 characters of [a-z0-9.-], each dot-separated part starting and "
        "ending alphanumeric (a pod name is)");
  if (p.retry_period <= std::chrono::milliseconds::zero())
    bad("retry_period (" + ms(p.retry_period) + ") must be positive");
  if (p.lease_duration < std::chrono::seconds(1) ||
      p.lease_duration % std::chrono::seconds(1) != std::chrono::milliseconds::zero())
    bad("lease_duration (" + ms(p.lease_duration) + ") must be whole seconds, at least 1s");
  if (p.renew_deadline <= p.retry_period)
    bad("renew_deadline (" + ms(p.renew_deadline) + ") must be greater than retry_period (" + ms(p.retry_period) + ")");
  if (p.lease_duration <= p.renew_deadline)
    bad("lease_duration (" + ms(p.lease_duration) + ") must be greater than renew_deadline (" + ms(p.renew_deadline) +
        ")");
  if (p.tokens_per_member == 0) bad("tokens_per_member must be at least 1");
  if (!problems.empty()) throw kube::error(client_errc::invalid_config, "sharding config: " + problems);
}

std::string shard_label_key(const sharding_params& p) { return std::string(shard_object_label_prefix) + p.ring; }

std::string shard_label_selector(const sharding_params& p) { return shard_label_key(p) + "=" + p.identity; }

std::string shard_lease_name(const sharding_params& p) { return p.ring + "-shard-" + p.identity; }

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

// ---- membership rules --------------------------------------------------------------

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

// ---- the coordinator ----------------------------------------------------------------

namespace detail {

namespace {

const group_version_resource leases_gvr{"coordination.k8s.io", "v1", "leases"};

shard_lease lease_of(const unstructured& u) {
  shard_lease l;
  l.name = u.name();
  l.resource_version = u.resource_version();
  if (const auto* spec = u.object().if_contains("spec"); spec != nullptr && spec->is_object()) {
    const auto& s = spec->as_object();
    if (const auto* h = s.if_contains("holderIdentity"); h != nullptr && h->is_string()) l.holder = h->as_string();
    if (const auto* d = s.if_contains("leaseDurationSeconds"); d != nullptr && d->is_int64())
      l.lease_duration_seconds = static_cast<int>(d->as_int64());
  }
  const auto annotations = u.annotations();
  if (auto it = annotations.find(std::string(shard_view_annotation)); it != annotations.end()) l.view = it->second;
  return l;
}

}  // namespace

class shard_coordinator_impl : public std::enable_shared_from_this<shard_coordinator_impl> {
public:
  using steady = std::chrono::steady_clock;

  shard_coordinator_impl(client c, sharding_params p, shard_coordinator_hooks h)
      : client_(std::move(c)),
        lease_client_(separate_client(client_)),
        params_(std::move(p)),
        hooks_(std::move(h)),
        lease_name_(shard_lease_name(params_)),
        leases_(lease_client_, leases_gvr, params_.lease_namespace),
        ex_(kube::make_strand_executor(client_.get_executor())),
        cv_(ex_, steady::time_point::max()),
        joined_cv_(ex_, steady::time_point::max()),
        label_cv_(ex_, steady::time_point::max()),
        state_(params_.identity, params_.renew_deadline, params_.tokens_per_member) {
    informer::informer_params<unstructured> io;
    io.name = "shard-leases";
    io.log = params_.log;
    informer::dynamic_lister_watcher_params lo;
    lo.expected_kind = "Lease";
    lo.label_selector = std::string(shard_ring_label) + "=" + params_.ring;
    informer_ = std::make_shared<informer::shared_index_informer<unstructured>>(
        lease_client_.get_executor(), std::make_shared<informer::dynamic_lister_watcher>(leases_, lo), std::move(io));
  }

  client client_;        // the controller's: label writes
  client lease_client_;  // Lease reads and writes, not queued behind the controller's requests
  sharding_params params_;
  shard_coordinator_hooks hooks_;
  std::string lease_name_;
  dynamic_api leases_;
  asio::any_io_executor ex_;
  asio::steady_timer cv_;         // wakes the main loop (Leases changed, a key finished)
  asio::steady_timer joined_cv_;  // wakes async_wait_joined
  asio::steady_timer label_cv_;   // wakes the label loop
  std::shared_ptr<informer::shared_index_informer<unstructured>> informer_;
  std::atomic<bool> running_{false};

  // Guarded by m_ (read by the controller's workers).
  mutable std::mutex m_;
  shard_membership state_;
  std::map<std::string, unsigned, std::less<>> started_;  // running keys
  std::set<std::string> waiting_;
  bool stopping_ = false;
  bool joined_ = false;

  // Label mode (set before async_run; then on ex_ only).
  struct labeled {
    shard_labeled_resource resource;
    std::shared_ptr<informer::shared_index_informer<partial_object_metadata>> unlabeled;
  };
  std::vector<labeled> labeled_;
  std::string label_key_;
  std::atomic<bool> unlabeled_dirty_{false};
  std::string swept_view_;         // the view whose foreign labels were taken
  steady::time_point swept_at_{};  // and when (the sweep is repeated every 30 s)
  bool swept_foreign_ = false;     // that sweep took objects labelled for non-members
  steady::time_point member_since_{};
  // Between the membership loop and the label loop (both on ex_).
  std::string handover_view_, handed_over_view_;  // asked for / done: relabel what a view gives away
  hash_ring handover_ring_;
  std::string agreed_label_view_;  // "" : not agreed
  hash_ring agreed_ring_;

  // On ex_ only.
  std::optional<unstructured> lease_;  // our Lease as last written or read
  bool was_agreed_ = false;
  bool was_member_ = false;
  bool wake_ = false;                // notify() came: run step() again without pausing
  steady::time_point last_write_{};  // of our Lease, successful

  steady::time_point now() const { return params_.now ? params_.now() : steady::now(); }

  void log(log_level l, const std::string& line) const {
    if (params_.log.enabled(l)) params_.log.log(l, "shard " + params_.ring + "/" + params_.identity + ": " + line);
  }

  std::string shard_key(const std::string& key) const { return params_.shard_key ? params_.shard_key(key) : key; }

  void notify() {
    asio::post(ex_, [self = shared_from_this()] {
      self->wake_ = true;  // also when no pause is pending (a write in flight): see main_loop
      self->cv_.cancel();
    });
  }

  // The Leases in the informer's cache, observed now.
  void refresh() {
    std::vector<shard_lease> leases;
    for (const auto& o : informer_->cache()->list()) leases.push_back(lease_of(*o));
    std::lock_guard lk(m_);
    state_.observe(std::move(leases), now());
  }

  // Every running key is ours under the current view.
  bool drained_locked() const {
    return std::all_of(started_.begin(), started_.end(),
                       [&](const auto& kv) { return state_.owner(shard_key(kv.first)) == params_.identity; });
  }

  unstructured desired(const std::string& view) const {
    unstructured u;
    if (lease_) {
      u = *lease_;
    } else {
      u.set_api_version("coordination.k8s.io/v1")
          .set_kind("Lease")
          .set_name(lease_name_)
          .set_namespace(params_.lease_namespace);
    }
    auto& md = u.object()["metadata"].as_object();
    auto& labels = md["labels"];
    if (!labels.is_object()) labels = json::object{};
    labels.as_object()[shard_ring_label] = params_.ring;
    auto& ann = md["annotations"];
    if (!ann.is_object()) ann = json::object{};
    ann.as_object()[shard_view_annotation] = view;
    auto& spec = u.object()["spec"];
    if (!spec.is_object()) spec = json::object{};
    auto& s = spec.as_object();
    const auto wall = format_micro_time(std::chrono::system_clock::now());
    if (!s.contains("holderIdentity") || !s["holderIdentity"].is_string() ||
        s["holderIdentity"].as_string() != params_.identity) {
      s["acquireTime"] = wall;
    }
    s["holderIdentity"] = params_.identity;
    s["leaseDurationSeconds"] = std::chrono::duration_cast<std::chrono::seconds>(params_.lease_duration).count();
    s["renewTime"] = wall;
    return u;
  }

  // Bounded by renew_deadline (client_errc::timeout).
  template <class Op>
  asio::awaitable<std::tuple<error_code, unstructured>> timed(Op op) {
    using namespace asio::experimental::awaitable_operators;
    asio::steady_timer t(co_await asio::this_coro::executor);
    t.expires_after(params_.renew_deadline);
    auto r = co_await (std::move(op) || t.async_wait(asio::as_tuple(asio::use_awaitable)));
    if (r.index() == 0) co_return std::get<0>(std::move(r));
    co_return std::tuple<error_code, unstructured>{make_error_code(client_errc::timeout), unstructured{}};
  }

  // Writes our Lease held, with `view` acknowledged. On a conflict it reads
  // the Lease: still ours (a write of ours that timed out but landed) ->
  // once more on top of it; emptied by another -> we had left: join anew
  // (no view acknowledged).
  asio::awaitable<bool> write(std::string view) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      const auto obj = desired(view);
      // The renew deadline counts from the send: the others count expiry
      // from when they see the write, which is at or after it was sent.
      const auto sent = now();
      std::tuple<error_code, unstructured> r;
      if (lease_) {
        r = co_await timed(leases_.async_replace(obj, asio::as_tuple(asio::use_awaitable)));
      } else {
        r = co_await timed(leases_.async_create(obj, asio::as_tuple(asio::use_awaitable)));
      }
      auto& [ec, written] = r;
      if (!ec) {
        const auto rv = written.resource_version();
        lease_ = std::move(written);
        last_write_ = sent;
        std::lock_guard lk(m_);
        state_.wrote(view, rv, sent);
        co_return true;
      }
      if (ec == api_errc::not_found) {
        // Deleted (kubectl, a namespace cleanup): not a member; create it anew.
        log(log_level::warning, "Lease " + lease_name_ + " was deleted: joining anew");
        lease_.reset();
        std::lock_guard lk(m_);
        state_.left();
        view.clear();
        continue;
      }
      if (ec != api_errc::conflict && ec != api_errc::already_exists) {
        log(log_level::warning, "writing Lease " + lease_name_ + " failed: " + ec.message());
        co_return false;
      }
      auto get_op = timed(leases_.async_get(lease_name_, asio::as_tuple(asio::use_awaitable)));
      auto [gec, got] = co_await std::move(get_op);
      if (gec) {
        if (gec == api_errc::not_found) lease_.reset();
        log(log_level::warning, "reading Lease " + lease_name_ + " failed: " + gec.message());
        continue;
      }
      const auto holder = lease_of(got).holder;
      if (!holder.empty() && holder != params_.identity) {
        // Never take a Lease another identity holds (sharding_params::identity must be unique).
        log(log_level::error, "Lease " + lease_name_ + " is held by \"" + holder + "\", not this replica");
        co_return false;
      }
      if (holder != params_.identity) {
        std::lock_guard lk(m_);
        if (state_.joined()) {
          log(log_level::warning, "Lease " + lease_name_ + " was emptied by another replica: joining anew");
        }
        state_.left();
        view.clear();
      }
      lease_ = std::move(got);
    }
    co_return false;
  }

  // Empties another replica's expired Lease, guarded by the resourceVersion seen.
  asio::awaitable<void> remove(const shard_lease& l) {
    auto cached = informer_->cache()->get_by_key(params_.lease_namespace + "/" + l.name);
    if (!cached || cached->resource_version() != l.resource_version) co_return;
    unstructured u = *cached;
    auto& spec = u.object()["spec"];
    if (!spec.is_object()) spec = json::object{};
    auto& s = spec.as_object();
    s["holderIdentity"] = "";
    s["leaseDurationSeconds"] = 1;
    auto op = timed(leases_.async_replace(u, asio::as_tuple(asio::use_awaitable)));
    auto [ec, res] = co_await std::move(op);
    (void)res;
    if (ec) {
      log(ec == api_errc::conflict ? log_level::debug : log_level::warning,
          "removing expired member " + l.holder + " failed: " + ec.message());
    } else {
      log(log_level::info, "removed member " + l.holder + " (its Lease expired)");
    }
  }

  asio::awaitable<void> release() {
    if (!lease_) co_return;
    unstructured u = *lease_;
    auto& spec = u.object()["spec"];
    if (!spec.is_object()) spec = json::object{};
    auto& s = spec.as_object();
    s["holderIdentity"] = "";
    s["leaseDurationSeconds"] = 1;
    auto& md = u.object()["metadata"];
    if (!md.is_object()) md = json::object{};
    auto& ann = md.as_object()["annotations"];
    if (!ann.is_object()) ann = json::object{};
    ann.as_object()[shard_view_annotation] = "";
    auto op = timed(leases_.async_replace(u, asio::as_tuple(asio::use_awaitable)));
    auto [ec, res] = co_await std::move(op);
    (void)res;
    if (ec) {
      log(log_level::warning, "releasing Lease " + lease_name_ + " failed: " + ec.message());
    } else {
      log(log_level::info, "left the ring");
    }
  }

  // Sleeps until notified or `d` passed. Throws when cancelled.
  asio::awaitable<void> pause(steady::duration d) {
    cv_.expires_after(d);
    auto [ec] = co_await cv_.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
    auto cs = co_await asio::this_coro::cancellation_state;
    if (cs.cancelled() != asio::cancellation_type::none) {
      throw boost::system::system_error(asio::error::operation_aborted);
    }
  }

  // After cancellation (not cancellable itself): checks `done` every 100 ms
  // or when woken.
  template <class Done>
  asio::awaitable<void> poll_until(Done done) {
    while (!done()) {
      cv_.expires_after(std::chrono::milliseconds(100));
      auto [ec] = co_await cv_.async_wait(asio::as_tuple(asio::use_awaitable));
      (void)ec;
    }
  }

  asio::awaitable<void> run_informer() { co_await informer_->async_run(asio::use_awaitable); }

  // ---- label mode ----

  // Sets the label to `value` on one object, guarded by `rv`. On a
  // conflict it reads the object again and retries once if `still` holds
  // for its current label value ("" : none).
  asio::awaitable<void> set_label(const shard_labeled_resource& r, const std::string& ns, const std::string& name,
                                  std::string rv, const std::function<bool(std::string_view)>& still,
                                  const std::string& value) {
    metadata_api api(client_, r.gvr, ns);
    for (int attempt = 0; attempt < 2; ++attempt) {
      json::object labels;
      labels[label_key_] = value;
      json::object md;
      md["resourceVersion"] = rv;
      md["labels"] = std::move(labels);
      json::object body;
      body["metadata"] = std::move(md);
      const std::string text = json::serialize(body);
      auto [ec, res] = co_await api.async_patch(name, patch_type::merge, text, asio::as_tuple(asio::use_awaitable));
      (void)res;
      if (!ec || ec == api_errc::not_found) co_return;
      if (ec != api_errc::conflict) {
        log(log_level::warning, "labelling " + r.gvr.resource + " " + ns + "/" + name + " failed: " + ec.message());
        co_return;
      }
      auto [gec, got] = co_await api.async_get(name, asio::as_tuple(asio::use_awaitable));
      if (gec) co_return;
      const auto& l = got.labels();
      const auto it = l.find(label_key_);
      if (!still(it == l.end() ? std::string_view{} : std::string_view(it->second))) co_return;
      rv = std::string(got.resource_version());
    }
  }

  // The owner of an object's key under `ring` ("" : not the controller's).
  std::string owner_of(const shard_labeled_resource& r, const partial_object_metadata& o, const hash_ring& ring) const {
    const auto key = r.key_of(o);
    return key ? ring.owner(shard_key(*key)) : std::string();
  }

  // Before acknowledging a view: what this replica holds but loses goes to
  // its new owner.
  // Owned types first: a child that reaches the new owner's cache before
  // its primary spares a reconcile that does not see it (not a guarantee:
  // informers of different resources are not ordered).
  asio::awaitable<void> hand_over(const hash_ring& ring) {
    for (auto it = labeled_.rbegin(); it != labeled_.rend(); ++it) {
      const auto& l = *it;
      for (const auto& o : l.resource.cached()) {
        const std::string to = ring.owner(shard_key(o.key));
        if (to.empty() || to == params_.identity) continue;
        // Cached by the label-selected informer: labelled ours at that
        // resourceVersion (a conflict re-reads it in set_label).
        const auto still_mine = [this](std::string_view v) { return v == params_.identity; };
        co_await set_label(l.resource, o.namespace_name, o.name, o.resource_version, still_mine, to);
      }
    }
  }

  // Under an agreed view: take the objects that are ours and unlabelled, or
  // (sweep) labelled for a replica that is not a member, and give away the
  // ones labelled ours that are not (a label written under an older view
  // that reached the cache only after that view's handover).
  asio::awaitable<void> take(const hash_ring& ring, bool sweep, bool foreign) {
    const auto& me = params_.identity;
    if (sweep) {
      co_await hand_over(ring);
    }
    for (auto it = labeled_.rbegin(); it != labeled_.rend(); ++it) {  // owned types first (see hand_over)
      const auto& l = *it;
      for (const auto& o : l.unlabeled->cache()->list()) {
        if (owner_of(l.resource, *o, ring) != me) continue;
        co_await set_label(
            l.resource, std::string(o->namespace_()), std::string(o->name()), std::string(o->resource_version()),
            [](std::string_view v) { return v.empty(); }, me);
      }
      if (!sweep || !foreign) continue;
      std::string selector = label_key_ + "," + label_key_ + " notin (";
      for (std::size_t i = 0; i < ring.members().size(); ++i) selector += (i ? "," : "") + ring.members()[i];
      selector += ")";
      metadata_api api(client_, l.resource.gvr, l.resource.namespace_name);
      list_params lp;
      lp.label_selector = selector;
      auto [ec, list] = co_await api.async_list_all(lp, asio::as_tuple(asio::use_awaitable));
      if (ec) {
        log(log_level::warning, "listing " + l.resource.gvr.resource + " of removed replicas failed: " + ec.message());
        continue;
      }
      const std::set<std::string, std::less<>> members(ring.members().begin(), ring.members().end());
      for (const auto& o : list.items) {
        if (owner_of(l.resource, o, ring) != me) continue;
        const auto not_member = [&members](std::string_view v) { return !v.empty() && !members.contains(v); };
        co_await set_label(l.resource, std::string(o.namespace_()), std::string(o.name()),
                           std::string(o.resource_version()), not_member, me);
      }
    }
  }

  // Label mode's writes, apart from the membership loop (they go through
  // the controller's client and its rate limiter, and may take long).
  asio::awaitable<void> label_loop() {
    for (;;) {
      if (!labeled_.empty()) {
        if (!handover_view_.empty() && handover_view_ != handed_over_view_) {
          const auto v = handover_view_;
          const hash_ring ring = handover_ring_;  // step() may replace it meanwhile
          co_await hand_over(ring);
          handed_over_view_ = v;
          wake_ = true;  // the membership loop acknowledges
          cv_.cancel();
        }
        if (!agreed_label_view_.empty()) {
          const auto v = agreed_label_view_;
          const auto r = agreed_ring_;
          // Objects labelled for non-members are taken only after this
          // replica has been a member for a lease duration: replicas that
          // start together (a restart, a rollout) then find their objects
          // still labelled for them, instead of the first one taking all.
          const bool foreign = now() - member_since_ >= params_.lease_duration;
          if (v != swept_view_ || (foreign && !swept_foreign_) ||
              steady::now() - swept_at_ >= std::chrono::seconds(30)) {
            unlabeled_dirty_ = false;
            co_await take(r, true, foreign);
            swept_view_ = v;
            swept_foreign_ = foreign;
            swept_at_ = steady::now();
          } else if (unlabeled_dirty_.exchange(false)) {
            co_await take(r, false, false);
          }
        }
      }
      label_cv_.expires_after(std::chrono::seconds(1));
      auto [ec] = co_await label_cv_.async_wait(asio::as_tuple(asio::use_awaitable));
      (void)ec;
      auto cs = co_await asio::this_coro::cancellation_state;
      if (cs.cancelled() != asio::cancellation_type::none) {
        throw boost::system::system_error(asio::error::operation_aborted);
      }
    }
  }

  asio::awaitable<void> step() {
    refresh();
    const auto t = now();
    bool member = false, joined = false, removed = false, need_ack = false, drained = false, agreed = false;
    std::string view;
    std::vector<shard_lease> expired;
    hash_ring ring;
    {
      std::lock_guard lk(m_);
      // Removed by another: our Lease, as recent as our last write or newer, is not ours.
      if (const auto* own = state_.find(lease_name_); own != nullptr && lease_ && own->holder != params_.identity) {
        const auto c = compare_resource_versions(own->resource_version, lease_->resource_version());
        removed = c ? *c >= 0 : false;
      }
      if (removed) state_.left();
      member = state_.member();
      joined = state_.joined();
      need_ack = state_.needs_acknowledgement();
      drained = drained_locked();
      view = state_.view();
      expired = state_.expired(t);
      ring = state_.ring();
      agreed = state_.agreed(t);
    }
    if (removed) {
      log(log_level::warning, "another replica removed this one from the ring: joining anew");
      lease_.reset();
      auto got = co_await timed(leases_.async_get(lease_name_, asio::as_tuple(asio::use_awaitable)));
      if (!std::get<0>(got)) lease_ = std::move(std::get<1>(got));
      was_agreed_ = false;
      co_await write("");
      co_return;
    }
    for (const auto& l : expired) co_await remove(l);
    // Label mode: what this replica loses is relabelled (by the label loop,
    // so that renewals go on meanwhile) before the view is acknowledged.
    const bool handed_over = labeled_.empty() || handed_over_view_ == view;
    if (need_ack && drained && !handed_over && handover_view_ != view) {
      handover_view_ = view;
      handover_ring_ = ring;
      label_cv_.cancel();
    }
    if (need_ack && drained && handed_over) {
      if (co_await write(view)) log(log_level::info, "acknowledged view [" + view + "]");
    } else if (!joined || now() - last_write_ >= params_.retry_period) {
      std::string ack;
      {
        std::lock_guard lk(m_);
        ack = state_.acknowledged();
      }
      co_await write(ack);  // join, or renew keeping the acknowledged view
    }
    bool waiting = false;
    {
      std::lock_guard lk(m_);
      waiting = !waiting_.empty();
    }
    if (agreed && (!was_agreed_ || waiting)) {
      // After any time without agreement every owned key is queued again
      // (keys dropped meanwhile as another's may be ours again); keys kept
      // while waiting are queued whenever there are some.
      const bool new_view = !was_agreed_;
      if (new_view) log(log_level::info, "view [" + view + "] agreed: starting its keys");
      if (hooks_.on_agreed) hooks_.on_agreed(new_view);
    }
    was_agreed_ = agreed;
    if (!labeled_.empty()) {
      // The label loop takes objects only under an agreed view.
      if (agreed) {
        agreed_ring_ = ring;
        agreed_label_view_ = view;
      } else {
        agreed_label_view_.clear();
      }
      label_cv_.cancel();
    }
    if (member && !was_member_) member_since_ = now();
    was_member_ = member;
    if (!joined_ && member && informer_->has_synced()) {
      std::lock_guard lk(m_);
      joined_ = true;
      joined_cv_.cancel();
    }
  }

  asio::awaitable<void> main_loop() {
    for (;;) {
      wake_ = false;
      co_await step();
      // Renewals every retry_period; Lease changes and finished keys wake us
      // sooner, also when they came while step() was writing.
      if (!wake_) {
        co_await pause(std::min<steady::duration>(params_.retry_period, std::chrono::milliseconds(500)));
      }
    }
  }

  asio::awaitable<void> run() {
    using namespace asio::experimental::awaitable_operators;
    informer::event_handler<unstructured> h;
    const std::weak_ptr<shard_coordinator_impl> weak = shared_from_this();
    auto wake = [weak] {
      if (auto self = weak.lock()) self->notify();
    };
    h.on_add = [wake](const auto&, bool) { wake(); };
    h.on_update = [wake](const auto&, const auto&) { wake(); };
    h.on_delete = [wake](const auto&) { wake(); };
    informer_->add_handler(std::move(h));
    // Label mode: the informers of unlabelled objects, stopped after the release.
    auto running = std::make_shared<std::size_t>(0);
    std::vector<std::shared_ptr<asio::cancellation_signal>> stops;
    for (auto& l : labeled_) {
      informer::event_handler<partial_object_metadata> uh;
      auto dirty = [weak] {
        if (auto self = weak.lock()) {
          self->unlabeled_dirty_ = true;
          self->notify();
        }
      };
      uh.on_add = [dirty](const auto&, bool) { dirty(); };
      uh.on_update = [dirty](const auto&, const auto&) { dirty(); };
      l.unlabeled->add_handler(std::move(uh));
      stops.push_back(std::make_shared<asio::cancellation_signal>());
      ++*running;
      l.unlabeled->async_run(asio::bind_cancellation_slot(
          stops.back()->slot(), asio::bind_executor(ex_, [self = shared_from_this(), running](error_code) {
            --*running;
            self->cv_.cancel();
          })));
    }
    std::exception_ptr failure;
    try {
      co_await (run_informer() || main_loop() || label_loop());
    } catch (...) {
      failure = std::current_exception();
    }
    // Graceful: admit nothing more, let the running keys finish, leave.
    co_await asio::this_coro::reset_cancellation_state();
    co_await asio::this_coro::throw_if_cancelled(false);
    {
      std::lock_guard lk(m_);
      stopping_ = true;
    }
    co_await poll_until([this] {
      std::lock_guard lk(m_);
      return started_.empty();
    });
    try {
      co_await release();
    } catch (const std::exception& e) {
      log(log_level::warning, std::string("releasing Lease ") + lease_name_ + " failed: " + e.what());
    }
    {
      std::lock_guard lk(m_);
      state_.left();
    }
    for (auto& stop : stops) stop->emit(asio::cancellation_type::terminal);
    co_await poll_until([&running] { return *running == 0; });
    if (failure) std::rethrow_exception(failure);
    throw boost::system::system_error(asio::error::operation_aborted);
  }
};

}  // namespace detail

shard_coordinator::shard_coordinator(client c, sharding_params params, shard_coordinator_hooks hooks) {
  validate(params);
  impl_ = std::make_shared<detail::shard_coordinator_impl>(std::move(c), std::move(params), std::move(hooks));
}

shard_coordinator::~shard_coordinator() = default;

void shard_coordinator::start(std::shared_ptr<detail::shard_coordinator_impl> impl,
                              asio::any_completion_handler<void(error_code)> handler) {
  if (impl->running_.exchange(true)) {
    auto hex = asio::get_associated_executor(handler, impl->ex_);
    asio::dispatch(hex,
                   [h = std::move(handler)]() mutable { std::move(h)(make_error_code(client_errc::already_running)); });
    return;
  }
  auto ex = impl->ex_;
  kube::detail::spawn_operation(ex, impl->run(), std::move(handler), [impl](std::exception_ptr e) {
    impl->running_ = false;
    if (e) {
      const auto ec = kube::detail::error_of(e);
      if (ec != asio::error::operation_aborted) impl->log(log_level::error, "stopped: " + detail::exception_text(e));
    }
    return std::tuple{kube::detail::error_of(e)};
  });
}

void shard_coordinator::wait_joined(std::shared_ptr<detail::shard_coordinator_impl> impl,
                                    asio::any_completion_handler<void(error_code)> handler) {
  auto ex = impl->ex_;
  kube::detail::spawn_operation(
      ex,
      [impl]() -> asio::awaitable<void> {
        co_await kube::detail::wait_until(impl->joined_cv_, [&] {
          std::lock_guard lk(impl->m_);
          return impl->joined_;
        });
      },
      std::move(handler), kube::detail::finish_with_error_code{});
}

void shard_coordinator::label(std::vector<shard_labeled_resource> resources) {
  auto& impl = *impl_;
  if (impl.running_) throw std::logic_error("kube::controller::shard_coordinator::label: call it before async_run");
  impl.label_key_ = shard_label_key(impl.params_);
  impl.labeled_.clear();
  for (auto& r : resources) {
    informer::metadata_lister_watcher_params lo;
    lo.label_selector = "!" + impl.label_key_;
    lo.strip_managed_fields = true;
    informer::informer_params<partial_object_metadata> io;
    io.name = "unlabelled-" + r.gvr.resource;
    io.log = impl.params_.log;
    auto inf = std::make_shared<informer::shared_index_informer<partial_object_metadata>>(
        impl.client_.get_executor(),
        std::make_shared<informer::metadata_lister_watcher>(metadata_api(impl.client_, r.gvr, r.namespace_name),
                                                            std::move(lo)),
        std::move(io));
    impl.labeled_.push_back({std::move(r), std::move(inf)});
  }
}

asio::awaitable<bool> shard_coordinator::primary_exists(const std::string& key) {
  if (impl_->labeled_.empty()) co_return false;
  const auto& r = impl_->labeled_.front().resource;
  const auto k = parse_key(key);
  if (!k) co_return false;
  metadata_api api(impl_->client_, r.gvr, k->namespace_);
  auto [ec, got] = co_await api.async_get(k->name, asio::as_tuple(asio::use_awaitable));
  (void)got;
  if (ec == api_errc::not_found) co_return false;
  if (ec) throw kube::error(ec, "reading " + r.gvr.resource + " " + key);
  co_return true;
}

std::string shard_coordinator::shard_key(const std::string& key) const { return impl_->shard_key(key); }

shard_decision shard_coordinator::decide(const std::string& key) const {
  const auto sk = impl_->shard_key(key);
  std::lock_guard lk(impl_->m_);
  if (impl_->stopping_) return shard_decision::not_mine;
  return impl_->state_.decide(sk, impl_->now());
}

namespace {
// try_start and confirm: decide, keep a waiting key (the next step queues
// it again once agreed), and with `start` count a key that is ours as running.
shard_decision admit(detail::shard_coordinator_impl& impl, const std::string& key, bool start) {
  const auto sk = impl.shard_key(key);
  std::lock_guard lk(impl.m_);
  if (impl.stopping_) return shard_decision::not_mine;
  const auto d = impl.state_.decide(sk, impl.now());
  if (d == shard_decision::mine && start) {
    ++impl.started_[key];
  } else if (d == shard_decision::waiting) {
    impl.waiting_.insert(key);
    impl.notify();
  }
  return d;
}
}  // namespace

shard_decision shard_coordinator::try_start(const std::string& key) { return admit(*impl_, key, true); }

shard_decision shard_coordinator::confirm(const std::string& key) { return admit(*impl_, key, false); }

void shard_coordinator::finish(const std::string& key) {
  bool draining = false;
  {
    std::lock_guard lk(impl_->m_);
    auto it = impl_->started_.find(key);
    if (it == impl_->started_.end()) return;
    if (--it->second == 0) impl_->started_.erase(it);
    draining = impl_->state_.needs_acknowledgement();
  }
  if (draining) impl_->notify();  // the acknowledgement may wait for this key
}

std::vector<std::string> shard_coordinator::take_waiting() {
  std::lock_guard lk(impl_->m_);
  std::vector<std::string> out(impl_->waiting_.begin(), impl_->waiting_.end());
  impl_->waiting_.clear();
  return out;
}

std::vector<std::string> shard_coordinator::members() const {
  std::lock_guard lk(impl_->m_);
  return impl_->state_.ring().members();
}

std::string shard_coordinator::owner(const std::string& key) const {
  const auto sk = impl_->shard_key(key);
  std::lock_guard lk(impl_->m_);
  return impl_->state_.owner(sk);
}

const sharding_params& shard_coordinator::params() const noexcept { return impl_->params_; }
const client& shard_coordinator::get_client() const noexcept { return impl_->client_; }

}  // namespace kube::controller
