#pragma once

// For integration tests that run an informer (or a factory) on its own
// thread and look at it from the test's thread.

#include <kube/error.hpp>
#include <kube/exception.hpp>
#include <kube/informer/reflector.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>

namespace kube_test {

/// Stops an informer running on its own thread (terminal cancellation
/// posted to its io_context) and joins the thread, whatever way the test
/// leaves.
struct joiner {
  std::thread& t;
  boost::asio::io_context& io;
  boost::asio::cancellation_signal& s;
  ~joiner() {
    boost::asio::post(io, [this] { s.emit(boost::asio::cancellation_type::terminal); });
    t.join();
  }
};

/// The reflector's counters of `inf`, read on the informer's strand.
template <class Informer>
kube::informer::reflector_stats reflector_stats_of(Informer& inf) {
  std::promise<kube::informer::reflector_stats> p;
  boost::asio::post(inf.get_executor(), [&] { p.set_value(inf.get_reflector().stats()); });
  return p.get_future().get();
}

/// Waits until `s` (an informer or a factory) has synced; fails the test
/// unless it does so within `limit`, without error.
template <class Syncable>
void require_synced(Syncable& s, std::chrono::seconds limit = std::chrono::seconds(30)) {
  std::promise<kube::error_code> synced;
  s.async_wait_for_sync([&](kube::error_code ec) { synced.set_value(ec); });
  auto f = synced.get_future();
  REQUIRE(f.wait_for(limit) == std::future_status::ready);
  REQUIRE_FALSE(f.get());
}

/// Runs the write `op` (a coroutine) until the apiserver takes it, for churn
/// across apiserver restarts: every 200 ms, for at most a minute. A retry
/// after a lost answer may find the work done (already exists, not found),
/// which counts as done.
template <class Op>
boost::asio::awaitable<void> retry_until_applied(Op op) {
  for (int i = 0; i < 300; ++i) {
    try {
      co_await op();
      co_return;
    } catch (const kube::error& e) {
      if (e.code() == kube::api_errc::already_exists || e.code() == kube::api_errc::not_found) co_return;
    }
    boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, std::chrono::milliseconds(200));
    co_await t.async_wait(boost::asio::use_awaitable);
  }
  throw std::runtime_error("a churn write never succeeded");
}

}  // namespace kube_test
