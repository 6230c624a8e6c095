// Sharded controllers: shard_coordinator and its membership loop (join,
// renew, acknowledge, remove expired members, release), and the admission
// of keys. Label mode's loop is in sharding_labels.cpp.
#include "sharding_internal.hpp"

#include <kube/async.hpp>
#include <kube/exception.hpp>
#include <kube/base/strand.hpp>
#include <kube/informer/dynamic_lister_watcher.hpp>
#include <kube/resource_version.hpp>
#include <kube/rest/separate_client.hpp>
#include <kube/tools/leader_election.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/multiple_exceptions.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <exception>
#include <mutex>
#include <utility>

namespace kube::controller {

namespace asio = boost::asio;
namespace json = boost::json;

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

shard_coordinator_impl::shard_coordinator_impl(client c, sharding_params p, shard_coordinator_hooks h)
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

void shard_coordinator_impl::notify() {
  asio::post(ex_, [self = shared_from_this()] {
    self->wake_ = true;  // also when no pause is pending (a write in flight): see main_loop
    self->cv_.cancel();
  });
}

// The Leases in the informer's cache, observed now.
void shard_coordinator_impl::refresh() {
  std::vector<shard_lease> leases;
  for (const auto& o : informer_->cache()->list()) leases.push_back(lease_of(*o));
  std::lock_guard lk(m_);
  state_.observe(std::move(leases), now());
}

// Every running key is ours under the current view.
bool shard_coordinator_impl::drained_locked() const {
  return std::all_of(started_.begin(), started_.end(),
                     [&](const auto& kv) { return state_.owner(shard_key(kv.first)) == params_.identity; });
}

unstructured shard_coordinator_impl::desired(const std::string& view) const {
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
asio::awaitable<std::tuple<error_code, unstructured>> shard_coordinator_impl::timed(Op op) {
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
asio::awaitable<bool> shard_coordinator_impl::write(std::string view) {
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
asio::awaitable<void> shard_coordinator_impl::remove(const shard_lease& l) {
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

asio::awaitable<void> shard_coordinator_impl::release() {
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
asio::awaitable<void> shard_coordinator_impl::pause(steady::duration d) {
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
asio::awaitable<void> shard_coordinator_impl::poll_until(Done done) {
  while (!done()) {
    cv_.expires_after(std::chrono::milliseconds(100));
    auto [ec] = co_await cv_.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
  }
}

asio::awaitable<void> shard_coordinator_impl::run_informer() { co_await informer_->async_run(asio::use_awaitable); }

asio::awaitable<void> shard_coordinator_impl::step() {
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

asio::awaitable<void> shard_coordinator_impl::main_loop() {
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

asio::awaitable<void> shard_coordinator_impl::run() {
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

namespace {

// A second async_run while one is in progress: it completes with this.
asio::awaitable<void> already_running() {
  throw boost::system::system_error(make_error_code(client_errc::already_running));
  co_return;
}

// async_run's coroutine once admitted: not running when it ends, either
// way; a failure other than a cancellation is logged.
asio::awaitable<void> run_once(std::shared_ptr<shard_coordinator_impl> impl) {
  try {
    co_await impl->run();
  } catch (...) {
    const auto e = std::current_exception();
    impl->running_ = false;
    if (kube::error_of(e) != asio::error::operation_aborted)
      impl->log(log_level::error, "stopped: " + kube::exception_message(e));
    throw;
  }
  impl->running_ = false;
}

}  // namespace

}  // namespace detail

shard_coordinator::shard_coordinator(client c, sharding_params params, shard_coordinator_hooks hooks) {
  validate(params);
  impl_ = std::make_shared<detail::shard_coordinator_impl>(std::move(c), std::move(params), std::move(hooks));
}

shard_coordinator::~shard_coordinator() = default;

asio::any_io_executor shard_coordinator::executor() const { return impl_->ex_; }

asio::awaitable<void> shard_coordinator::run(std::shared_ptr<detail::shard_coordinator_impl> impl) {
  // Checked when async_run is initiated, not when its coroutine first runs
  // on the strand: label() right after async_run sees it running.
  if (impl->running_.exchange(true)) return detail::already_running();
  return detail::run_once(std::move(impl));
}

asio::awaitable<void> shard_coordinator::wait_joined(std::shared_ptr<detail::shard_coordinator_impl> impl) {
  co_await kube::wait_until(impl->joined_cv_, [&] {
    std::lock_guard lk(impl->m_);
    return impl->joined_;
  });
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
