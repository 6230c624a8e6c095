// The client's retry decision (libkube/src/transport/retry_policy.hpp),
// driven with attempt outcomes and no socket.
#include "transport/retry_policy.hpp"

#include <boost/asio/error.hpp>

#include <catch2/catch.hpp>

using kube::error_code;
using kube::http_method;
using kube::detail::attempt_outcome;
using kube::detail::retry_action;
using kube::detail::retry_policy;
using kind = retry_action::kind;
namespace aerr = boost::asio::error;

namespace {
// A pooled keep-alive connection that failed after the request was written,
// before any response byte (the server closed it while idle, or reset it).
attempt_outcome lost(error_code ec) { return {.ec = ec, .reused = true, .nothing_received = true}; }
// The same before any byte of the request was written.
attempt_outcome unsent(error_code ec) {
  return {.ec = ec, .reused = true, .nothing_written = true, .nothing_received = true};
}
attempt_outcome answer(unsigned status, int retry_after = -1) {
  return {.http_status = status, .retry_after = retry_after};
}
}  // namespace

TEST_CASE("a 2xx or a plain error answer ends the request", "[retry_policy]") {
  retry_policy p(http_method::get, 10);
  CHECK(p.next(answer(200)).what == kind::done);
  CHECK(p.next(answer(404)).what == kind::done);
  CHECK(p.next(answer(500)).what == kind::done);  // 5xx without Retry-After
  CHECK(p.next(answer(429)).what == kind::done);
  CHECK(p.retries() == 0);
}

TEST_CASE("a cancelled attempt is never retried", "[retry_policy]") {
  retry_policy p(http_method::get, 10);
  CHECK(p.next(lost(aerr::operation_aborted)).what == kind::done);
}

TEST_CASE("a GET that lost its keep-alive connection before any answer is sent again at once", "[retry_policy]") {
  retry_policy p(http_method::get, 10);
  auto a = p.next(lost(aerr::eof));
  CHECK(a.what == kind::retry);
  CHECK(a.delay == std::chrono::milliseconds(0));
  a = p.next(lost(aerr::connection_reset));
  CHECK(a.what == kind::retry);
  CHECK(a.delay == std::chrono::milliseconds(0));
  CHECK(p.retries() == 2);
  // Part of the answer arrived: the connection was not merely stale.
  CHECK(p.next({.ec = aerr::eof, .reused = true}).what == kind::done);
}

TEST_CASE("a written write is never sent twice: lost or reset, POST, PUT, PATCH and DELETE end", "[retry_policy]") {
  for (auto m : {http_method::post, http_method::put, http_method::patch, http_method::delete_}) {
    retry_policy p(m, 10);
    CHECK(p.next(lost(aerr::eof)).what == kind::done);
    CHECK(p.next(lost(aerr::eof)).not_replayed);
    CHECK(p.next(lost(aerr::connection_reset)).what == kind::done);
    CHECK(p.next({.ec = aerr::connection_reset}).what == kind::done);  // on a new connection too
    CHECK(p.retries() == 0);
  }
  retry_policy head(http_method::head, 10);
  CHECK(head.next(lost(aerr::connection_reset)).what == kind::retry);
}

TEST_CASE("a request not written at all is sent again on a new connection, whatever its method", "[retry_policy]") {
  for (auto m : {http_method::get, http_method::post, http_method::patch, http_method::delete_}) {
    retry_policy p(m, 10);
    const auto a = p.next(unsent(aerr::broken_pipe));
    CHECK(a.what == kind::retry);
    CHECK(a.delay == std::chrono::milliseconds(0));
  }
}

TEST_CASE("a new connection's failure is not replayed (only a reset GET, after a second)", "[retry_policy]") {
  retry_policy p(http_method::get, 10);
  CHECK(p.next({.ec = aerr::connection_refused}).what == kind::done);
  CHECK(p.next({.ec = aerr::eof, .nothing_received = true}).what == kind::done);
  CHECK(p.next({.ec = aerr::eof, .nothing_written = true, .nothing_received = true}).what == kind::done);
  const auto a = p.next({.ec = aerr::connection_reset, .nothing_received = true});
  CHECK(a.what == kind::retry);
  CHECK(a.delay == std::chrono::seconds(1));
}

TEST_CASE("the client's own timeout is not a lost connection: never replayed", "[retry_policy]") {
  retry_policy p(http_method::get, 10);
  CHECK(p.next(lost(kube::client_errc::timeout)).what == kind::done);
  retry_policy post(http_method::post, 10);
  CHECK(post.next(lost(kube::client_errc::timeout)).what == kind::done);
}

TEST_CASE("Retry-After on 429 and 5xx waits as told, then gives up past max_retries", "[retry_policy]") {
  retry_policy p(http_method::post, 2);
  auto a = p.next(answer(429, 3));
  CHECK(a.what == kind::retry);
  CHECK(a.delay == std::chrono::seconds(3));
  a = p.next(answer(503, 0));
  CHECK(a.what == kind::retry);
  CHECK(a.delay == std::chrono::milliseconds(0));
  CHECK(p.next(answer(503, 1)).what == kind::give_up);
  CHECK(p.retries() == 2);
}

TEST_CASE("connection retries and Retry-After share one count", "[retry_policy]") {
  retry_policy p(http_method::get, 1);
  CHECK(p.next(lost(aerr::eof)).what == kind::retry);
  CHECK(p.next(lost(aerr::eof)).what == kind::done);  // out of retries: the failure goes to the caller
  CHECK(p.next(answer(429, 1)).what == kind::give_up);
}

TEST_CASE("max_retries 0 (streams) follows neither lost connections nor Retry-After", "[retry_policy]") {
  retry_policy p(http_method::get, 0);
  CHECK(p.next(lost(aerr::eof)).what == kind::done);
  CHECK(p.next(answer(429, 1)).what == kind::give_up);
}

TEST_CASE("a 401 asks for fresh credentials once", "[retry_policy]") {
  retry_policy p(http_method::get, 10);
  CHECK(p.next(answer(401)).what == kind::refresh_and_retry);
  CHECK(p.next(answer(401)).what == kind::done);
  CHECK(p.retries() == 0);
}
