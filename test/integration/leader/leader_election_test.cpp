// kube::leader_elector against the real apiserver: two candidates in one
// process, handover after cancel (with release) and after a crash (no
// release, expiry by lease_duration), and a foreign write that must not be
// overwritten. Lease timings are short: 3 s / 2 s / 0.5 s.
#include "support.hpp"

#include <kube/dynamic/dynamic_api.hpp>
#include <kube/tools/leader_election.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <memory>

using namespace kube_test;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

// One candidate: an elector plus what its callbacks saw.
struct candidate {
  std::string id;
  std::unique_ptr<kube::leader_elector> elector;
  asio::cancellation_signal stop;
  bool done = false;
  kube::error_code result;
  int started = 0, stopped = 0, leading_cancelled = 0;
  std::vector<std::string> new_leaders;
};

// Shared invariant: how many on_started_leading bodies are running at once.
struct arena {
  int leading_now = 0;
  int max_leading = 0;
};

std::unique_ptr<candidate> make_candidate(kube::client c, const std::string& ns, const std::string& lease,
                                          const std::string& id, arena& a, bool release = true) {
  auto cand = std::make_unique<candidate>();
  cand->id = id;
  kube::leader_elector_params cfg;
  cfg.lease_namespace = ns;
  cfg.lease_name = lease;
  cfg.identity = id;
  cfg.lease_duration = 3s;
  cfg.renew_deadline = 2s;
  cfg.retry_period = 500ms;
  cfg.release_on_cancel = release;
  auto* p = cand.get();
  cfg.on_started_leading = [p, &a]() -> asio::awaitable<void> {
    ++p->started;
    a.max_leading = std::max(a.max_leading, ++a.leading_now);
    std::exception_ptr e;
    try {
      asio::steady_timer forever(co_await asio::this_coro::executor, steady::time_point::max());
      co_await forever.async_wait(asio::use_awaitable);  // "work" until leadership ends
    } catch (...) {
      e = std::current_exception();
    }
    --a.leading_now;
    ++p->leading_cancelled;
    if (e) std::rethrow_exception(e);
  };
  cfg.on_stopped_leading = [p]() -> asio::awaitable<void> {
    ++p->stopped;
    co_return;
  };
  cfg.on_new_leader = [p](std::string who) -> asio::awaitable<void> {
    p->new_leaders.push_back(std::move(who));
    co_return;
  };
  cand->elector = std::make_unique<kube::leader_elector>(std::move(c), std::move(cfg));
  return cand;
}

void start(candidate& cand) {
  cand.elector->async_run(asio::bind_cancellation_slot(cand.stop.slot(), [&cand](kube::error_code ec) {
    cand.result = ec;
    cand.done = true;
  }));
}

std::string lease_field(const std::string& ns, const std::string& lease, const std::string& field) {
  return capture(kubectl() + "get lease -n " + ns + " " + lease + " -o jsonpath={.spec." + field + "}");
}

asio::awaitable<void> cancel_and_wait(candidate& cand) {
  cand.stop.emit(asio::cancellation_type::terminal);
  const bool finished = co_await eventually([&] { return cand.done; }, 10s);
  REQUIRE(finished);
  CHECK(cand.result == asio::error::operation_aborted);
}

}  // namespace

TEST_CASE("two electors: exactly one leads, cancelling it hands over fast, the release is visible",
          "[leader][integration]") {
  const auto ns = unique_name("leader");
  create_namespace(ns);
  run_test([&](kube::client c) -> asio::awaitable<void> {
    arena a;
    auto x = make_candidate(c, ns, "lock", "replica-x", a);
    auto y = make_candidate(c, ns, "lock", "replica-y", a);
    start(*x);
    start(*y);
    const bool someone = co_await eventually([&] { return x->elector->is_leader() || y->elector->is_leader(); }, 10s);
    REQUIRE(someone);
    // Watch them for 3 s (a whole lease duration): never two leaders.
    const auto watch_until = steady::now() + 3s;
    while (steady::now() < watch_until) {
      CHECK_FALSE((x->elector->is_leader() && y->elector->is_leader()));
      co_await pause(50ms);
    }
    CHECK(a.max_leading == 1);
    auto& leader = x->elector->is_leader() ? *x : *y;
    auto& follower = x->elector->is_leader() ? *y : *x;
    REQUIRE(leader.elector->is_leader());
    CHECK_FALSE(follower.elector->is_leader());
    CHECK(lease_field(ns, "lock", "holderIdentity") == leader.id);
    CHECK(lease_field(ns, "lock", "leaseDurationSeconds") == "3");
    CHECK(follower.elector->leader() == leader.id);  // observed through the Lease
    CHECK(leader.started == 1);
    CHECK(follower.started == 0);
    REQUIRE_FALSE(follower.new_leaders.empty());
    CHECK(follower.new_leaders.front() == leader.id);

    // Cancel the leader: it releases, so the follower takes over at its next
    // retry (<= 2.2 x 0.5 s), well inside lease_duration.
    const auto t_cancel = steady::now();
    co_await cancel_and_wait(leader);
    CHECK(leader.stopped == 1);
    CHECK(leader.leading_cancelled == 1);
    CHECK_FALSE(leader.elector->is_leader());
    const bool took_over = co_await eventually([&] { return follower.elector->is_leader(); }, 6s);
    const auto handover = steady::now() - t_cancel;
    REQUIRE(took_over);
    INFO("handover after release took " << std::chrono::duration_cast<std::chrono::milliseconds>(handover).count()
                                        << " ms");
    CHECK(handover < 3s);
    CHECK(follower.started == 1);
    CHECK(a.max_leading == 1);
    CHECK(lease_field(ns, "lock", "holderIdentity") == follower.id);
    CHECK(lease_field(ns, "lock", "leaseTransitions") == "1");  // x or y -> release (no transition) -> the other

    co_await cancel_and_wait(follower);
    CHECK(follower.stopped == 1);
    // The last leader released too: empty holder, 1 second.
    CHECK(lease_field(ns, "lock", "holderIdentity").empty());
    CHECK(lease_field(ns, "lock", "leaseDurationSeconds") == "1");
  });
}

TEST_CASE("a crashed leader (no release) is replaced only after lease_duration", "[leader][integration]") {
  const auto ns = unique_name("leader-crash");
  create_namespace(ns);
  run_test([&](kube::client c) -> asio::awaitable<void> {
    arena a;
    auto x = make_candidate(c, ns, "lock", "crashy", a, /*release=*/false);
    start(*x);
    REQUIRE(co_await eventually([&] { return x->elector->is_leader(); }, 10s));
    auto y = make_candidate(c, ns, "lock", "standby", a);
    start(*y);
    co_await pause(1500ms);  // y is campaigning and observing x's renewals
    CHECK_FALSE(y->elector->is_leader());
    CHECK(y->elector->leader() == "crashy");

    const auto t_crash = steady::now();
    co_await cancel_and_wait(*x);  // stops renewing, writes nothing
    CHECK(lease_field(ns, "lock", "holderIdentity") == "crashy");
    REQUIRE(co_await eventually([&] { return y->elector->is_leader(); }, 10s));
    const auto takeover = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t_crash);
    INFO("takeover after crash took " << takeover.count() << " ms");
    // y last saw the record change at most one jittered retry (<= 1.1 s) before
    // the crash, and it retries at most 1.1 s after expiry: [3 - 1.1, 3 + 1.1] s,
    // plus request time (generous: CI runs this under ASan beside other tests).
    CHECK(takeover >= 1900ms);
    CHECK(takeover <= 5500ms);
    CHECK(lease_field(ns, "lock", "holderIdentity") == "standby");
    CHECK(lease_field(ns, "lock", "leaseTransitions") == "1");
    co_await cancel_and_wait(*y);
  });
}

TEST_CASE("a foreign holder written in between is not overwritten and the leader steps down",
          "[leader][integration][conflict]") {
  const auto ns = unique_name("leader-conflict");
  create_namespace(ns);
  run_test([&](kube::client c) -> asio::awaitable<void> {
    arena a;
    auto x = make_candidate(c, ns, "lock", "honest", a);
    start(*x);
    REQUIRE(co_await eventually([&] { return x->elector->is_leader(); }, 10s));

    // Another client takes the Lease behind our back, for 30 s.
    kube::dynamic_api leases(c, {"coordination.k8s.io", "v1", "leases"}, ns);
    auto lease = co_await leases.async_get("lock");
    const auto stale = lease;
    lease.object()["spec"].as_object()["holderIdentity"] = "intruder";
    lease.object()["spec"].as_object()["leaseDurationSeconds"] = 30;
    co_await leases.async_replace(lease);
    // Writing from the old resourceVersion is refused by the server...
    auto [ec, ignored] = co_await leases.async_replace(stale, asio::as_tuple(asio::use_awaitable));
    CHECK(ec == kube::api_errc::conflict);

    // ...so the elector's optimistic renew conflicts, it reads the Lease,
    // sees a valid foreign holder, and steps down without writing.
    REQUIRE(co_await eventually([&] { return !x->elector->is_leader(); }, 5s));
    CHECK(co_await eventually([&] { return x->stopped == 1; }, 2s));
    CHECK(x->leading_cancelled == 1);
    co_await pause(2s);
    CHECK(lease_field(ns, "lock", "holderIdentity") == "intruder");
    CHECK(x->elector->leader() == "intruder");
    CHECK_FALSE(x->elector->is_leader());
    co_await cancel_and_wait(*x);
    // Not the holder: cancelling must not release (clear) the intruder's Lease.
    CHECK(lease_field(ns, "lock", "holderIdentity") == "intruder");
  });
}
