#pragma once

// Shared helpers of the leader/events/finalizer integration tests.

#include "support/client_support.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <functional>

namespace kube_test {

/// stdout of a shell command (stderr dropped), trailing newline trimmed.
inline std::string capture(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>/dev/null").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ::pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

/// Polls `pred` every 20 ms until it holds or `timeout` passes; returns whether it held.
inline asio::awaitable<bool> eventually(std::function<bool()> pred, std::chrono::milliseconds timeout) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (pred()) co_return true;
    if (std::chrono::steady_clock::now() >= deadline) co_return false;
    t.expires_after(std::chrono::milliseconds(20));
    co_await t.async_wait(asio::use_awaitable);
  }
}

inline asio::awaitable<void> pause(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor);
  t.expires_after(d);
  co_await t.async_wait(asio::use_awaitable);
}

/// Runs the test coroutine on a fresh io_context; rethrows its failure.
template <class F>
void run_test(F body) {
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  std::exception_ptr failure;
  asio::co_spawn(io, body(c), [&](std::exception_ptr e) { failure = e; });
  io.run();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace kube_test
