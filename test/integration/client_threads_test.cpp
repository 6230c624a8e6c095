// kube::client shared by coroutines on several threads of one io_context,
// and by callers on other threads (run under ThreadSanitizer in CI): the
// pool, limiter and authenticator are confined to the client's strand.
#include "support/client_support.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

using namespace kube_test;

TEST_CASE("one client serves coroutines on four threads without data races", "[client][threads]") {
  asio::thread_pool pool(4);
  auto c = kube::detail::client_access::make(pool.get_executor(), admin_cert_settings());
  std::atomic<int> ok{0}, failed{0};
  for (int worker = 0; worker < 8; ++worker) {
    asio::co_spawn(
        pool,
        [&]() -> asio::awaitable<void> {
          for (int i = 0; i < 10; ++i) {
            auto [ec, r] = co_await c.async_request(get_version(), asio::as_tuple(asio::use_awaitable));
            (ec ? failed : ok)++;
          }
        },
        asio::detached);
  }
  pool.join();
  CHECK(ok == 80);
  CHECK(failed == 0);
  // Concurrency needs more than one connection, reuse keeps it far below 80.
  CHECK(c.connections_opened() >= 1);
  CHECK(c.connections_opened() <= 8);
}

TEST_CASE("requests started from foreign threads complete through futures", "[client][threads]") {
  asio::thread_pool pool(2);
  auto c = kube::detail::client_access::make(pool.get_executor(), token_settings("admin"));
  std::vector<std::thread> callers;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        auto fut = c.async_request(kube::request{}.resource("namespaces").name("default"), asio::use_future);
        ok += fut.get().status == 200;
      }
    });
  }
  for (auto& t : callers) t.join();
  pool.join();
  CHECK(ok == 20);
}
