// event_recorder's queue: bounded, never blocks, drops and counts; bad input
// is refused; a second async_run is refused; the default completion token
// works with awaitable operators (cancellation of async_run).
#include <kube/tools/event_recorder.hpp>
#include <kube/exception.hpp>
#include <kube/tools/leader_election.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <catch2/catch.hpp>

namespace {

// A client for a server that is never contacted by these tests.
kube::client offline_client(boost::asio::io_context& io) {
  kube::detail::transport_params s;
  s.server = "http://127.0.0.1:1";
  s.log.level = kube::log_level::off;
  return kube::detail::client_access::make(io.get_executor(), std::move(s));
}

}  // namespace

TEST_CASE("record() queues up to the capacity and counts what it drops", "[events][queue]") {
  boost::asio::io_context io;
  kube::event_recorder_params o;
  o.component = "c";
  o.queue_capacity = 3;
  kube::event_recorder rec(offline_client(io), o);
  const kube::object_reference pod{"v1", "Pod", "demo", "p", "u"};
  for (int i = 0; i < 5; ++i) rec.record(pod, kube::event_type::normal, "R", "m" + std::to_string(i));
  CHECK(rec.queued() == 3);
  CHECK(rec.stats().recorded == 3);
  CHECK(rec.stats().dropped == 2);

  rec.record(kube::object_reference{"v1", "Pod", "demo", "", ""}, kube::event_type::normal, "R", "no name");
  rec.record(pod, kube::event_type::normal, "", "no reason");
  CHECK(rec.stats().dropped == 4);
  CHECK(rec.queued() == 3);
}

TEST_CASE("event recorder and leader elector refuse bad options at construction", "[events][leader]") {
  boost::asio::io_context io;
  kube::event_recorder_params o;
  CHECK_THROWS_AS(kube::event_recorder(offline_client(io), o), kube::error);
  o.component = "c";
  o.queue_capacity = 0;
  CHECK_THROWS_AS(kube::event_recorder(offline_client(io), o), kube::error);

  kube::leader_elector_params c;
  c.lease_namespace = "ns";
  c.lease_name = "l";
  c.identity = "me";
  c.lease_duration = std::chrono::seconds(2);  // not > renew_deadline (10s default)
  try {
    kube::leader_elector e(offline_client(io), c);
    FAIL("expected an error");
  } catch (const kube::error& e) {
    CHECK(e.code() == kube::client_errc::invalid_config);
    CHECK_THAT(e.diag().client_message(),
               Catch::Contains("lease_duration (2000ms) must be greater than renew_deadline"));
  }
}

TEST_CASE("a second concurrent async_run is refused", "[events][queue]") {
  boost::asio::io_context io;
  kube::event_recorder_params o;
  o.component = "c";
  kube::event_recorder rec(offline_client(io), o);
  boost::asio::cancellation_signal stop;
  kube::error_code first, second;
  bool first_done = false;
  rec.async_run(boost::asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code ec) {
    first = ec;
    first_done = true;
  }));
  rec.async_run([&](kube::error_code ec) {
    second = ec;
    stop.emit(boost::asio::cancellation_type::terminal);
  });
  io.run();
  CHECK(second == kube::client_errc::already_running);
  CHECK(first_done);
  CHECK(first == boost::asio::error::operation_aborted);
}

TEST_CASE("the default token: co_await async_run() raced with a timer through awaitable operators",
          "[events][leader]") {
  using namespace boost::asio::experimental::awaitable_operators;
  boost::asio::io_context io;
  auto c = offline_client(io);
  kube::event_recorder_params o;
  o.component = "c";
  kube::event_recorder rec(c, o);
  kube::leader_elector_params cfg;
  cfg.lease_namespace = "ns";
  cfg.lease_name = "l";
  cfg.identity = "me";
  cfg.lease_duration = std::chrono::seconds(3);
  cfg.renew_deadline = std::chrono::seconds(2);
  cfg.retry_period = std::chrono::milliseconds(100);
  kube::leader_elector elector(c, cfg);
  std::size_t rec_index = 99, elector_index = 99;
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        boost::asio::steady_timer t(co_await boost::asio::this_coro::executor);
        t.expires_after(std::chrono::milliseconds(100));
        auto race = rec.async_run() || t.async_wait(boost::asio::use_awaitable);
        rec_index = (co_await std::move(race)).index();
        // The elector cannot reach the server (connection refused): it keeps
        // campaigning until the timer cancels it; it never leads.
        t.expires_after(std::chrono::milliseconds(300));
        auto race2 = elector.async_run() || t.async_wait(boost::asio::use_awaitable);
        elector_index = (co_await std::move(race2)).index();
      },
      boost::asio::detached);
  io.run();
  CHECK(rec_index == 1);
  CHECK(elector_index == 1);
  CHECK_FALSE(elector.is_leader());
  CHECK(elector.leader().empty());
  CHECK(elector.transitions() == 0);
}
