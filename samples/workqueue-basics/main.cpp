// workqueue-basics: a producer, two worker coroutines and rate-limited retries
// on one io_context. No cluster needed. Exits 0 when every item was processed
// exactly as expected, and prints what happened.
//
// docs/workqueue.md walks through this file.
#include <kube/workqueue/rate_limited_queue.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <thread>

namespace asio = boost::asio;
namespace wq = kube::workqueue;

namespace {

// Pretend reconcile: "default/flaky" fails twice before it succeeds.
bool reconcile(const std::string& key, std::map<std::string, int>& attempts) {
  const int attempt = ++attempts[key];
  return key != "default/flaky" || attempt > 2;
}

// [worker]
asio::awaitable<void> worker(int id, wq::rate_limited_queue<std::string>& queue, std::map<std::string, int>& attempts,
                             int& succeeded) {
  for (;;) {
    auto [ec, key] = co_await queue.async_get(asio::as_tuple(asio::deferred));
    if (ec) co_return;  // wq::errc::shut_down: the queue is closed and empty
    if (reconcile(key, attempts)) {
      queue.forget(key);  // success: reset the key's backoff
      std::printf("worker %d: %s ok\n", id, key.c_str());
      if (++succeeded == 4) queue.shutdown();  // all four keys done: let the workers leave
    } else {
      queue.add_rate_limited(key);  // failure: retry after 5ms, 10ms, 20ms, ...
      std::printf("worker %d: %s failed, retry #%d\n", id, key.c_str(), queue.num_requeues(key));
    }
    queue.done(key);  // always: lets the key be handed out again
  }
}
// [worker]

}  // namespace

int main() {
  asio::io_context io;
  // [queue]
  wq::rate_limited_queue<std::string> queue(io.get_executor());  // default controller rate limiter
  // [queue]
  std::map<std::string, int> attempts;  // touched only by workers, all on `io`
  int succeeded = 0;

  // A producer on another thread (an informer's event handler, say): add() is
  // thread-safe. "default/a" is added twice; it is stored once while waiting.
  std::thread producer([&] {
    for (const char* key : {"default/a", "default/b", "default/flaky", "default/a", "default/c"}) queue.add(key);
  });
  producer.join();

  // Workers start after the producer, so both adds of "default/a" land while it
  // waits (stored once). Had a worker already held it, the second add would
  // have queued it again after done(), as in client-go.
  for (int id = 1; id <= 2; ++id) asio::co_spawn(io, worker(id, queue, attempts, succeeded), asio::detached);

  io.run();  // returns when the queue is shut down and the workers have left

  const bool ok = succeeded == 4 && attempts["default/a"] == 1 && attempts["default/b"] == 1 &&
                  attempts["default/c"] == 1 && attempts["default/flaky"] == 3;
  std::printf("%s: %d keys succeeded, default/flaky took %d attempts\n", ok ? "PASS" : "FAIL", succeeded,
              attempts["default/flaky"]);
  return ok ? 0 : 1;
}
