// Leader election over a coordination.k8s.io/v1 Lease through the dynamic
// client. Follows client-go's tools/leaderelection (leaderelection.go) and
// resourcelock/leaselock.go; see leader_election.hpp for the rules.
#include "tools/complete_now.hpp"
#include "transport/client_impl.hpp"

#include <kube/dynamic/dynamic_api.hpp>
#include <kube/exception.hpp>
#include <kube/tools/leader_election.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <random>

namespace kube {
namespace asio = boost::asio;
namespace json = boost::json;
using namespace asio::experimental::awaitable_operators;

std::string format_micro_time(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto us = duration_cast<microseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(us / 1000000);
  long frac = static_cast<long>(us % 1000000);
  if (frac < 0) {
    frac += 1000000;
    --secs;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
  return buf;
}

namespace {

std::string ms(std::chrono::milliseconds d) { return std::to_string(d.count()) + "ms"; }

}  // namespace

void validate(const leader_elector_params& c) {
  std::string problems;
  auto bad = [&](const std::string& p) {
    if (!problems.empty()) problems += "; ";
    problems += p;
  };
  if (c.lease_name.empty()) bad("lease_name is empty");
  if (c.lease_namespace.empty()) bad("lease_namespace is empty");
  if (c.identity.empty()) bad("identity is empty");
  if (c.retry_period <= std::chrono::milliseconds::zero())
    bad("retry_period (" + ms(c.retry_period) + ") must be positive");
  if (c.renew_deadline <= std::chrono::milliseconds::zero())
    bad("renew_deadline (" + ms(c.renew_deadline) + ") must be positive");
  if (c.lease_duration < std::chrono::seconds(1))
    bad("lease_duration (" + ms(c.lease_duration) + ") must be at least 1s");
  else if (c.lease_duration % std::chrono::seconds(1) != std::chrono::milliseconds::zero())
    bad("lease_duration (" + ms(c.lease_duration) + ") must be whole seconds (a Lease stores leaseDurationSeconds)");
  if (c.lease_duration <= c.renew_deadline)
    bad("lease_duration (" + ms(c.lease_duration) + ") must be greater than renew_deadline (" + ms(c.renew_deadline) +
        ")");
  // client-go: RenewDeadline > JitterFactor * RetryPeriod, JitterFactor = 1.2
  if (c.renew_deadline.count() * 10 <= c.retry_period.count() * 12)
    bad("renew_deadline (" + ms(c.renew_deadline) + ") must be greater than 1.2 x retry_period (" + ms(c.retry_period) +
        ")");
  if (!problems.empty()) throw kube::error(client_errc::invalid_config, "leader election config: " + problems);
}

// ---- the decision state machine -------------------------------------------------

void leader_election_state::observe(const leader_election_record& r, time_point now) {
  if (!observed_ || *observed_ != r) {
    observed_ = r;
    observed_time_ = now;
  }
}

void leader_election_state::wrote(const leader_election_record& r, time_point now) {
  observed_ = r;
  observed_time_ = now;
}

bool leader_election_state::is_leader() const noexcept {
  return observed_ && !identity_.empty() && observed_->holder_identity == identity_;
}

bool leader_election_state::lease_valid(time_point now) const noexcept {
  if (!observed_) return false;
  return observed_time_ + std::chrono::seconds(observed_->lease_duration_seconds) > now;
}

bool leader_election_state::may_write(time_point now) const noexcept {
  if (!observed_) return true;  // nothing there: create
  // client-go: held by someone, not expired, and not us -> wait.
  return !(!observed_->holder_identity.empty() && lease_valid(now) && !is_leader());
}

leader_election_record leader_election_state::desired(const std::string& wall_now) const {
  leader_election_record r;
  r.holder_identity = identity_;
  r.lease_duration_seconds = static_cast<int>(lease_duration_.count());
  r.acquire_time = wall_now;
  r.renew_time = wall_now;
  if (observed_) {
    if (is_leader()) {
      r.acquire_time = observed_->acquire_time;
      r.leader_transitions = observed_->leader_transitions;
    } else {
      r.leader_transitions = observed_->leader_transitions + 1;
    }
  }
  return r;
}

leader_election_record leader_election_state::released(const std::string& wall_now) const {
  leader_election_record r;
  r.lease_duration_seconds = 1;
  r.acquire_time = wall_now;
  r.renew_time = wall_now;
  if (observed_) r.leader_transitions = observed_->leader_transitions;
  return r;
}

// ---- the elector -----------------------------------------------------------------

namespace detail {
namespace {

const group_version_resource leases_gvr{"coordination.k8s.io", "v1", "leases"};

leader_election_record record_of(const unstructured& lease) {
  leader_election_record r;
  const auto* spec = lease.object().if_contains("spec");
  if (!spec || !spec->is_object()) return r;
  const auto& s = spec->as_object();
  auto str = [&](std::string_view k) {
    const auto* v = s.if_contains(k);
    return v && v->is_string() ? std::string(v->as_string()) : std::string();
  };
  auto num = [&](std::string_view k) {
    const auto* v = s.if_contains(k);
    if (v && v->is_int64()) return static_cast<int>(v->as_int64());
    if (v && v->is_uint64()) return static_cast<int>(v->as_uint64());
    return 0;
  };
  r.holder_identity = str("holderIdentity");
  r.lease_duration_seconds = num("leaseDurationSeconds");
  r.acquire_time = str("acquireTime");
  r.renew_time = str("renewTime");
  r.leader_transitions = num("leaseTransitions");
  return r;
}

// The Lease `base` (keeping every field we do not manage) with `r` as its spec.
unstructured with_record(unstructured base, const leader_election_record& r) {
  auto& spec = base.object()["spec"];
  if (!spec.is_object()) spec = json::object{};
  auto& s = spec.as_object();
  s["holderIdentity"] = r.holder_identity;
  s["leaseDurationSeconds"] = r.lease_duration_seconds;
  s["acquireTime"] = r.acquire_time;
  s["renewTime"] = r.renew_time;
  s["leaseTransitions"] = r.leader_transitions;
  return base;
}

}  // namespace

class leader_elector_impl : public std::enable_shared_from_this<leader_elector_impl> {
public:
  using steady = std::chrono::steady_clock;

  leader_elector_impl(client c, leader_elector_params cfg)
      : client_(std::move(c)),
        leases_(client_, leases_gvr, cfg.lease_namespace),
        cfg_(std::move(cfg)),
        ex_(detail::client_access::impl(client_)->strand),
        state_(cfg_.identity, std::chrono::duration_cast<std::chrono::seconds>(cfg_.lease_duration)),
        rng_(std::random_device{}()) {}

  client client_;
  dynamic_api leases_;
  leader_elector_params cfg_;
  asio::strand<asio::any_io_executor> ex_;

  // Touched on ex_ only.
  leader_election_state state_;
  std::optional<unstructured> lease_;  // the Lease as last read or written (its resourceVersion guards updates)
  std::string reported_leader_;
  std::minstd_rand rng_;

  // Read from any thread.
  std::atomic<bool> leader_{false};
  std::atomic<unsigned> transitions_{0};
  std::atomic<bool> running_{false};
  mutable std::mutex m_;
  std::string holder_;  // guarded by m_

  steady::time_point now() const { return cfg_.now ? cfg_.now() : steady::now(); }

  void log(log_level l, const std::string& line) const {
    const auto& lg = detail::client_access::impl(client_)->settings.log;
    if (lg.enabled(l))
      lg.log(l,
             "leader election " + cfg_.lease_namespace + "/" + cfg_.lease_name + " (" + cfg_.identity + "): " + line);
  }

  static std::string what(const error_code& ec) { return ec.message(); }

  asio::awaitable<void> sleep(steady::duration d) {
    asio::steady_timer t(co_await asio::this_coro::executor);
    t.expires_after(d);
    co_await t.async_wait(asio::use_awaitable);
  }

  steady::duration jittered(steady::duration base) {
    // client-go wait.Jitter(d, 1.2): d + rand[0,1) * 1.2 * d
    std::uniform_real_distribution<double> u(0.0, 1.2);
    return base + std::chrono::duration_cast<steady::duration>(base * u(rng_));
  }

  // Runs a dynamic-client call, bounded by `deadline` (client_errc::timeout).
  template <class Op>
  asio::awaitable<std::tuple<error_code, unstructured>> timed(Op op, steady::time_point deadline) {
    asio::steady_timer t(co_await asio::this_coro::executor);
    t.expires_at(deadline);
    auto race = std::move(op) || t.async_wait(asio::as_tuple(asio::use_awaitable));
    auto r = co_await std::move(race);
    if (r.index() == 0) co_return std::get<0>(std::move(r));
    co_return std::tuple<error_code, unstructured>{make_error_code(client_errc::timeout), unstructured{}};
  }

  asio::awaitable<std::tuple<error_code, unstructured>> replace(const unstructured& obj, steady::time_point deadline) {
    return timed(leases_.async_replace(obj, asio::as_tuple(asio::use_awaitable)), deadline);
  }

  void publish_holder() {
    std::string holder = state_.observed() ? state_.observed()->holder_identity : std::string();
    {
      std::lock_guard lk(m_);
      holder_ = holder;
    }
    if (holder != reported_leader_) {
      reported_leader_ = holder;
      if (!holder.empty()) {
        log(log_level::info, "new leader " + holder);
        if (cfg_.on_new_leader) {
          asio::co_spawn(ex_, cfg_.on_new_leader(holder), [self = shared_from_this()](std::exception_ptr e) {
            if (e) self->log(log_level::error, "on_new_leader failed: " + exception_message(e));
          });
        }
      }
    }
  }

  // client-go's tryAcquireOrRenew.
  asio::awaitable<bool> try_acquire_or_renew(steady::time_point deadline) {
    const std::string wall = format_micro_time(std::chrono::system_clock::now());
    // 1. The leader's fast path: update the Lease read last time, without a GET.
    if (lease_ && state_.may_renew_optimistically(now())) {
      const auto rec = state_.desired(wall);
      const auto obj = with_record(*lease_, rec);
      auto [ec, res] = co_await replace(obj, deadline);
      if (!ec) {
        lease_ = std::move(res);
        state_.wrote(rec, now());
        co_return true;
      }
      log(log_level::debug, "optimistic renew failed (" + what(ec) + "), reading the lease");
    }
    // 2. Read the Lease, or create it.
    auto get_op = timed(leases_.async_get(cfg_.lease_name, asio::as_tuple(asio::use_awaitable)), deadline);
    auto [gec, got] = co_await std::move(get_op);
    if (gec == api_errc::not_found) {
      state_.reset();
      lease_.reset();
      const auto rec = state_.desired(wall);
      unstructured obj;
      obj.set_api_version("coordination.k8s.io/v1")
          .set_kind("Lease")
          .set_name(cfg_.lease_name)
          .set_namespace(cfg_.lease_namespace);
      obj = with_record(std::move(obj), rec);
      auto create_op = timed(leases_.async_create(obj, asio::as_tuple(asio::use_awaitable)), deadline);
      auto [cec, created] = co_await std::move(create_op);
      if (cec) {
        log(cec == api_errc::already_exists ? log_level::debug : log_level::warning,
            "creating the lease failed: " + what(cec));
        co_return false;
      }
      lease_ = std::move(created);
      state_.wrote(rec, now());
      co_return true;
    }
    if (gec) {
      log(log_level::warning, "reading the lease failed: " + what(gec));
      co_return false;
    }
    // 3. Observe it; wait while someone else's lease is valid.
    state_.observe(record_of(got), now());
    lease_ = std::move(got);
    if (!state_.may_write(now())) co_return false;
    // 4. Take it over (or renew it), guarded by its resourceVersion.
    const auto rec = state_.desired(wall);
    const auto obj = with_record(*lease_, rec);
    auto [uec, updated] = co_await replace(obj, deadline);
    if (uec) {
      log(uec == api_errc::conflict ? log_level::debug : log_level::warning, "updating the lease failed: " + what(uec));
      co_return false;
    }
    lease_ = std::move(updated);
    state_.wrote(rec, now());
    co_return true;
  }

  asio::awaitable<void> acquire() {
    for (;;) {
      const bool ok = co_await try_acquire_or_renew(steady::now() + cfg_.renew_deadline);
      publish_holder();
      if (ok) co_return;
      co_await sleep(jittered(cfg_.retry_period));
    }
  }

  // Returns when leadership is lost.
  asio::awaitable<void> renew_loop() {
    for (;;) {
      co_await sleep(cfg_.retry_period);
      const auto deadline = steady::now() + cfg_.renew_deadline;
      for (;;) {
        const bool ok = co_await try_acquire_or_renew(deadline);
        publish_holder();
        if (ok) break;
        if (state_.observed() && !state_.is_leader()) {
          log(log_level::warning, "lost the lease to " + state_.observed()->holder_identity);
          co_return;
        }
        if (steady::now() + cfg_.retry_period >= deadline) {
          log(log_level::warning, "could not renew the lease within renew_deadline; stepping down");
          co_return;
        }
        co_await sleep(cfg_.retry_period);
      }
    }
  }

  asio::awaitable<void> leading() {
    if (cfg_.on_started_leading) co_await cfg_.on_started_leading();
    // Returned on its own: keep leading until renew_loop ends.
    asio::steady_timer forever(co_await asio::this_coro::executor, steady::time_point::max());
    co_await forever.async_wait(asio::use_awaitable);
  }

  // client-go's release: read the Lease first. A renew cancelled while in
  // flight may have reached the server, and then the resourceVersion kept
  // here is stale: the update would conflict, and the others would wait out
  // the whole lease_duration instead of taking over at their next retry.
  asio::awaitable<void> release() {
    if (!state_.is_leader() || !lease_) co_return;
    const auto deadline = steady::now() + cfg_.renew_deadline;
    auto get_op = timed(leases_.async_get(cfg_.lease_name, asio::as_tuple(asio::use_awaitable)), deadline);
    auto [gec, got] = co_await std::move(get_op);
    if (gec) {
      log(log_level::warning, "releasing the lease failed: reading it: " + what(gec));
      co_return;
    }
    auto rec = state_.released(format_micro_time(std::chrono::system_clock::now()));
    rec.leader_transitions = record_of(got).leader_transitions;
    lease_ = std::move(got);
    const auto obj = with_record(*lease_, rec);
    auto [ec, res] = co_await replace(obj, deadline);
    if (ec) {
      log(log_level::warning, "releasing the lease failed: " + what(ec));
      co_return;
    }
    lease_ = std::move(res);
    state_.wrote(rec, now());
    publish_holder();
    log(log_level::info, "released the lease");
  }

  asio::awaitable<void> run() {
    for (;;) {
      co_await acquire();
      leader_ = true;
      ++transitions_;
      log(log_level::info, "became leader");
      std::exception_ptr failure;
      try {
        auto both = renew_loop() || leading();
        co_await std::move(both);
      } catch (...) {
        failure = std::current_exception();
      }
      const auto cs = co_await asio::this_coro::cancellation_state;
      const bool cancelled = cs.cancelled() != asio::cancellation_type::none;
      if (cancelled) failure = nullptr;
      co_await asio::this_coro::reset_cancellation_state();
      if ((cancelled || failure) && cfg_.release_on_cancel) co_await release();
      leader_ = false;
      if (failure) log(log_level::error, "on_started_leading failed: " + exception_message(failure));
      if (cfg_.on_stopped_leading) {
        std::exception_ptr e;
        try {
          co_await cfg_.on_stopped_leading();
        } catch (...) {
          e = std::current_exception();
        }
        if (e) log(log_level::error, "on_stopped_leading failed: " + exception_message(e));
      }
      if (cancelled) throw boost::system::system_error(asio::error::operation_aborted);
      if (failure) std::rethrow_exception(failure);
      log(log_level::info, "stopped leading; campaigning again");
    }
  }
};

void leader_elector_start(std::shared_ptr<leader_elector_impl> impl,
                          asio::any_completion_handler<void(error_code)> handler) {
  start_once(std::move(impl), std::move(handler), [](leader_elector_impl& l) { l.leader_ = false; });
}

}  // namespace detail

leader_elector::leader_elector(client c, leader_elector_params config) {
  validate(config);
  impl_ = std::make_shared<detail::leader_elector_impl>(std::move(c), std::move(config));
}

bool leader_elector::is_leader() const noexcept { return impl_->leader_.load(); }
std::string leader_elector::leader() const {
  std::lock_guard lk(impl_->m_);
  return impl_->holder_;
}
unsigned leader_elector::transitions() const noexcept { return impl_->transitions_.load(); }
const leader_elector_params& leader_elector::config() const noexcept { return impl_->cfg_; }

}  // namespace kube
