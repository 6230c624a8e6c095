// Sharded controllers, label mode (sharding_params::label_objects): the
// coordinator's loop that labels objects for their owners (hand over what
// a view gives away, take what is ours and unlabelled or labelled for a
// removed replica), and shard_coordinator::label / primary_exists.
#include "sharding_internal.hpp"

#include <kube/controller/reconcile.hpp>

#include <kube/exception.hpp>
#include <kube/informer/metadata_lister_watcher.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <boost/system/system_error.hpp>

#include <set>
#include <stdexcept>

namespace kube::controller {

namespace asio = boost::asio;
namespace json = boost::json;

namespace detail {

// Sets the label to `value` on one object, guarded by `rv`. On a
// conflict it reads the object again and retries once if `still` holds
// for its current label value ("" : none).
asio::awaitable<void> shard_coordinator_impl::set_label(const shard_labeled_resource& r, const std::string& ns,
                                                        const std::string& name, std::string rv,
                                                        const std::function<bool(std::string_view)>& still,
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
std::string shard_coordinator_impl::owner_of(const shard_labeled_resource& r, const partial_object_metadata& o,
                                             const hash_ring& ring) const {
  const auto key = r.key_of(o);
  return key ? ring.owner(shard_key(*key)) : std::string();
}

// Before acknowledging a view: what this replica holds but loses goes to
// its new owner.
// Owned types first: a child that reaches the new owner's cache before
// its primary spares a reconcile that does not see it (not a guarantee:
// informers of different resources are not ordered).
asio::awaitable<void> shard_coordinator_impl::hand_over(const hash_ring& ring) {
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
asio::awaitable<void> shard_coordinator_impl::take(const hash_ring& ring, bool sweep, bool foreign) {
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
asio::awaitable<void> shard_coordinator_impl::label_loop() {
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
        if (v != swept_view_ || (foreign && !swept_foreign_) || steady::now() - swept_at_ >= std::chrono::seconds(30)) {
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

}  // namespace detail

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

}  // namespace kube::controller
