// kube/async.hpp: async_spawn's completion codes, cancellation and tokens;
// wait_until's wake-up and cancellation. One thread, no sleeps. The
// cancellation cases pass lambda coroutines with captures: async_spawn keeps
// the lambda (where the captures live) until its coroutine ends.
#include <kube/async.hpp>
#include <kube/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <utility>

namespace asio = boost::asio;

namespace {

// Runs async_spawn(body) with a plain callback; the code it completed with.
template <class Body>
std::optional<kube::error_code> spawn_and_run(Body body) {
  asio::io_context io;
  std::optional<kube::error_code> got;
  kube::async_spawn(io.get_executor(), body, [&](kube::error_code ec) { got = ec; });
  io.run();
  return got;
}

// The example of docs/guides/async.md, as written there.
class heartbeat {
public:
  explicit heartbeat(boost::asio::any_io_executor ex)
      : ex_(std::move(ex)) {}

  template <class Token = kube::use_awaitable_t>
  auto async_run(Token&& token = {}) {
    return kube::async_spawn(
        ex_, [this] { return run(); }, std::forward<Token>(token));
  }

private:
  boost::asio::awaitable<void> run() {
    boost::asio::steady_timer t(ex_);
    for (;;) {
      t.expires_after(std::chrono::seconds(1));
      co_await t.async_wait(boost::asio::use_awaitable);  // throws operation_aborted once cancelled
    }
  }
  boost::asio::any_io_executor ex_;
};

}  // namespace

TEST_CASE("the guide's heartbeat runs until its operation is cancelled", "[async]") {
  asio::io_context io;
  heartbeat hb(io.get_executor());
  asio::cancellation_signal stop;
  std::optional<kube::error_code> got;
  hb.async_run(asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code ec) { got = ec; }));
  asio::post(io, [&] { stop.emit(asio::cancellation_type::terminal); });
  io.run();  // returns only once the operation has completed
  REQUIRE(got);
  CHECK(*got == asio::error::operation_aborted);
}

TEST_CASE("async_spawn completes with the coroutine's outcome as an error_code", "[async]") {
  auto ok = spawn_and_run([]() -> asio::awaitable<void> { co_return; });
  REQUIRE(ok);
  CHECK_FALSE(*ok);

  auto failed = spawn_and_run([]() -> asio::awaitable<void> {
    throw kube::error(kube::api_errc::forbidden, "no");
    co_return;
  });
  REQUIRE(failed);
  CHECK(*failed == kube::api_errc::forbidden);

  auto other = spawn_and_run([]() -> asio::awaitable<void> {
    throw std::runtime_error("not a system_error");
    co_return;
  });
  REQUIRE(other);
  CHECK(*other == boost::system::errc::state_not_recoverable);
}

TEST_CASE("async_spawn: the token's cancellation reaches the coroutine", "[async]") {
  asio::io_context io;
  asio::steady_timer forever(io, asio::steady_timer::time_point::max());
  asio::cancellation_signal stop;
  std::optional<kube::error_code> got;
  kube::async_spawn(
      io.get_executor(), [&]() -> asio::awaitable<void> { co_await forever.async_wait(asio::use_awaitable); },
      asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code ec) { got = ec; }));
  asio::post(io, [&] { stop.emit(asio::cancellation_type::terminal); });
  io.run();
  REQUIRE(got);
  CHECK(*got == asio::error::operation_aborted);
}

TEST_CASE("async_spawn with kube::use_awaitable throws the code as a system_error", "[async]") {
  asio::io_context io;
  std::optional<kube::error_code> caught;
  bool ok_returned = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        co_await kube::async_spawn(ex, []() -> asio::awaitable<void> { co_return; });  // default token
        ok_returned = true;
        try {
          co_await kube::async_spawn(
              ex,
              []() -> asio::awaitable<void> {
                throw kube::error(kube::api_errc::conflict, "again");
                co_return;
              },
              kube::use_awaitable);
        } catch (const boost::system::system_error& e) {
          caught = e.code();
        }
      },
      asio::detached);
  io.run();
  CHECK(ok_returned);
  REQUIRE(caught);
  CHECK(*caught == kube::api_errc::conflict);
}

TEST_CASE("wait_until resumes when the notifier cancels the timer and ready() holds", "[async]") {
  asio::io_context io;
  asio::steady_timer cv(io, asio::steady_timer::time_point::max());
  int value = 0;
  int wakeups = 0;
  bool done = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await kube::wait_until(cv, [&] {
          ++wakeups;
          return value >= 2;
        });
        done = true;
      },
      asio::detached);
  // A wake-up while not ready yet: the waiter checks and waits again.
  asio::post(io, [&] {
    value = 1;
    cv.cancel();
    asio::post(io, [&] {
      value = 2;
      cv.cancel();
    });
  });
  io.run();
  CHECK(done);
  CHECK(wakeups == 3);  // before waiting, after value 1, after value 2
}

TEST_CASE("wait_until throws operation_aborted when its coroutine is cancelled", "[async]") {
  asio::io_context io;
  asio::steady_timer cv(io, asio::steady_timer::time_point::max());
  asio::cancellation_signal stop;
  std::optional<kube::error_code> got;
  kube::async_spawn(
      io.get_executor(), [&]() -> asio::awaitable<void> { co_await kube::wait_until(cv, [] { return false; }); },
      asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code ec) { got = ec; }));
  asio::post(io, [&] { stop.emit(asio::cancellation_type::terminal); });
  io.run();
  REQUIRE(got);
  CHECK(*got == asio::error::operation_aborted);
}
