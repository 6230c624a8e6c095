// The client's exchange rules, against a scripted local HTTP server (plain
// TCP on 127.0.0.1) that answers each request as the test says: 429/5xx with
// Retry-After are retried at most max_retries times, 5xx without it is not,
// a reset connection is retried for GET only, a write on a reused
// connection that closed unanswered is never sent twice (a GET is), warnings
// reach the hook, gzip
// is asked for (unless disabled) and decoded, other encodings are refused.
#include "support/raw_http_server.hpp"

#include <kube/rest/client.hpp>
#include <kube/with_diagnostics.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using request_t = http::request<http::string_body>;

namespace {

// What the server does with the n-th request (0-based).
struct reply {
  unsigned status = 200;
  std::string retry_after;  // empty: no header
  bool reset = false;       // close the connection with RST instead of answering
  bool close = false;       // close the connection (FIN) instead of answering
  std::string warning;      // a Warning header value
  std::string encoding;     // a Content-Encoding header value
  std::string body;         // the body as sent (default: a small JSON object or a Status)
};

reply answer(unsigned status, std::string retry_after = {}) {
  reply r;
  r.status = status;
  r.retry_after = std::move(retry_after);
  return r;
}
reply reset_connection() {
  reply r;
  r.reset = true;
  return r;
}
reply close_without_answer() {
  reply r;
  r.close = true;
  return r;
}

// The test's script over raw_http_server: records each request's method and
// Accept-Encoding, then answers, resets or closes as the script's reply says.
struct scripted_server {
  scripted_server(asio::any_io_executor ex, std::function<reply(int)> f)
      : script(std::move(f)),
        server(std::move(ex), [this](tcp::socket& s, const request_t& req, int n) { return answer(s, req, n); }) {}
  std::function<reply(int)> script;
  int requests = 0;
  std::vector<std::string> methods;
  std::vector<std::string> accept_encodings;  // per request, "" when absent
  kube_test::raw_http_server server;          // last: its handler uses the members above

  std::string url() const { return server.url(); }

  asio::awaitable<bool> answer(tcp::socket& sock, const request_t& req, int n) {
    requests = n + 1;
    methods.emplace_back(req.method_string());
    accept_encodings.emplace_back(req[http::field::accept_encoding]);
    const reply r = script(n);
    if (r.reset) {
      sock.set_option(tcp::socket::linger(true, 0));  // RST on close
      co_return false;
    }
    if (r.close) co_return false;
    http::response<http::string_body> res{static_cast<http::status>(r.status), 11};
    res.set(http::field::content_type, "application/json");
    if (!r.retry_after.empty()) res.set(http::field::retry_after, r.retry_after);
    if (!r.warning.empty()) res.set(http::field::warning, r.warning);
    if (!r.encoding.empty()) res.set(http::field::content_encoding, r.encoding);
    const char* reason = r.status == 429 ? "TooManyRequests" : r.status == 503 ? "ServiceUnavailable" : "InternalError";
    res.body() = r.status == 200 ? std::string(R"({"ok":true})")
                                 : R"({"kind":"Status","status":"Failure","reason":")" + std::string(reason) +
                                       R"(","code":)" + std::to_string(r.status) + "}";
    if (!r.body.empty()) res.body() = r.body;
    res.keep_alive(true);
    res.prepare_payload();
    auto [wec, wn] = co_await http::async_write(sock, res, asio::as_tuple(asio::use_awaitable));
    co_return !wec;
  }
};

struct outcome {
  kube::error_code ec;
  kube::response res;
  int requests = 0;
  std::vector<std::string> methods;
  std::vector<std::string> warnings;
  std::vector<std::string> accept_encodings;
};

outcome exchange(std::function<reply(int)> script, kube::http_method method = kube::http_method::get,
                 int max_retries = 10, bool disable_compression = false) {
  asio::io_context io;
  scripted_server server(io.get_executor(), std::move(script));
  kube::detail::transport_params s;
  s.server = server.url();
  s.qps = 0;
  s.max_retries = max_retries;
  s.disable_compression = disable_compression;
  outcome out;
  s.on_warning = [&](std::string_view w) { out.warnings.emplace_back(w); };
  auto c = kube::detail::client_access::make(io.get_executor(), s);
  c.async_request(kube::request{}.method(method).raw_path("/x").body(method == kube::http_method::get ? "" : "{}"),
                  [&](kube::error_code ec, kube::response r) {
                    out.ec = ec;
                    out.res = std::move(r);
                    io.stop();
                  });
  io.run_for(std::chrono::seconds(60));
  out.requests = server.requests;
  out.methods = server.methods;
  out.accept_encodings = server.accept_encodings;
  return out;
}

// A GET answered 200 on a keep-alive connection, then a request of `second`
// that the client sends on that same (reused) connection; the outcome is the
// second request's.
outcome second_on_reused_connection(std::function<reply(int)> script, kube::http_method second) {
  asio::io_context io;
  scripted_server server(io.get_executor(), std::move(script));
  kube::detail::transport_params s;
  s.server = server.url();
  s.qps = 0;
  auto c = kube::detail::client_access::make(io.get_executor(), s);
  outcome out;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto [ec1, r1] =
            co_await c.async_request(kube::request{}.raw_path("/first"), asio::as_tuple(asio::use_awaitable));
        CHECK_FALSE(ec1);
        CHECK(r1.status == 200);
        kube::diagnostics diag;
        auto [ec, r] = co_await c.async_request(kube::request{}.method(second).raw_path("/second").body("{}"),
                                                kube::with_diagnostics(diag, asio::as_tuple(asio::use_awaitable)));
        out.ec = ec;
        out.res = std::move(r);
        out.res.diag = std::move(diag);
        io.stop();
      },
      asio::detached);
  io.run_for(std::chrono::seconds(60));
  out.requests = server.requests;
  out.methods = server.methods;
  return out;
}

}  // namespace

TEST_CASE("a POST on a reused connection that closes unanswered is sent once and fails clearly", "[retry][replay]") {
  auto o = second_on_reused_connection([](int n) { return n == 0 ? answer(200) : close_without_answer(); },
                                       kube::http_method::post);
  CHECK(o.ec);  // the connection's end (Beast's end_of_stream)
  CHECK(o.res.status == 0);
  CHECK(o.methods == std::vector<std::string>{"GET", "POST"});  // the POST reached the server exactly once
  CHECK(o.res.diag.client_message().find("not sent again") != std::string::npos);
}

TEST_CASE("a GET on a reused connection that closes unanswered is sent again on a new one", "[retry][replay]") {
  auto o = second_on_reused_connection([](int n) { return n == 1 ? close_without_answer() : answer(200); },
                                       kube::http_method::get);
  CHECK_FALSE(o.ec);
  CHECK(o.res.status == 200);
  CHECK(o.methods == std::vector<std::string>{"GET", "GET", "GET"});
}

TEST_CASE("429 with Retry-After is retried after the given delay until it succeeds", "[retry]") {
  const auto start = std::chrono::steady_clock::now();
  auto o = exchange([](int n) { return n < 2 ? answer(429, "1") : answer(200); });
  CHECK_FALSE(o.ec);
  CHECK(o.res.status == 200);
  CHECK(o.requests == 3);
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(1900));  // two waits of 1 s
}

TEST_CASE("a 503 with Retry-After is retried, also for POST", "[retry]") {
  auto o = exchange([](int n) { return n < 1 ? answer(503, "0") : answer(200); }, kube::http_method::post);
  CHECK_FALSE(o.ec);
  CHECK(o.requests == 2);
}

TEST_CASE("retries stop after max_retries and say so", "[retry]") {
  auto o = exchange([](int) { return answer(429, "0"); }, kube::http_method::get, 10);
  CHECK(o.ec == kube::client_errc::too_many_retries);
  CHECK(o.requests == 11);  // the first try and 10 retries
  CHECK(o.res.status == 429);
  CHECK(o.res.diag.client_message().find("gave up after 10 retries") != std::string::npos);
}

TEST_CASE("a 500 without Retry-After is not retried", "[retry]") {
  auto o = exchange([](int) { return answer(500); });
  CHECK(o.ec == kube::api_errc::internal_error);
  CHECK(o.requests == 1);
}

TEST_CASE("a reset connection is retried on a new connection for GET", "[retry]") {
  auto o = exchange([](int n) { return n == 0 ? reset_connection() : answer(200); });
  CHECK_FALSE(o.ec);
  CHECK(o.requests == 2);
}

TEST_CASE("a reset connection is not retried for POST", "[retry]") {
  auto o = exchange([](int) { return reset_connection(); }, kube::http_method::post);
  CHECK(o.ec);
  CHECK(o.requests == 1);
}

TEST_CASE("server Warning headers reach the warning hook as text", "[warnings]") {
  auto o = exchange([](int) {
    auto r = answer(200);
    r.warning = R"(299 - "v1 ComponentStatus is deprecated in v1.19+")";
    return r;
  });
  CHECK_FALSE(o.ec);
  CHECK(o.warnings == std::vector<std::string>{"v1 ComponentStatus is deprecated in v1.19+"});
  CHECK(o.res.warnings == o.warnings);
}

namespace {

// {"ok":true} gzip-encoded (RFC 1952), as `gzip -n` writes it.
std::string gzipped_ok() {
  static const unsigned char bytes[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xab,
                                        0x56, 0xca, 0xcf, 0x56, 0xb2, 0x2a, 0x29, 0x2a, 0x4d, 0xad, 0x05,
                                        0x00, 0x90, 0x5f, 0xd4, 0xa7, 0x0b, 0x00, 0x00, 0x00};
  return std::string(reinterpret_cast<const char*>(bytes), sizeof bytes);
}

}  // namespace

TEST_CASE("gzip is asked for, and a gzip body is decoded", "[compression]") {
  auto o = exchange([](int) {
    auto r = answer(200);
    r.encoding = "gzip";
    r.body = gzipped_ok();
    return r;
  });
  REQUIRE_FALSE(o.ec);
  CHECK(o.accept_encodings == std::vector<std::string>{"gzip"});
  CHECK(o.res.body == R"({"ok":true})");
  CHECK(o.res.content_encoding == "gzip");
}

TEST_CASE("disable_compression sends no Accept-Encoding", "[compression]") {
  auto o = exchange([](int) { return answer(200); }, kube::http_method::get, 10, true);
  REQUIRE_FALSE(o.ec);
  CHECK(o.accept_encodings == std::vector<std::string>{""});
  CHECK(o.res.body == R"({"ok":true})");
  CHECK(o.res.content_encoding.empty());
}

TEST_CASE("a gzip error body is decoded before its Status is read", "[compression]") {
  auto o = exchange([](int) {
    auto r = answer(500);
    r.encoding = "gzip";
    r.body = gzipped_ok();  // not a Status: kept as the message
    return r;
  });
  CHECK(o.ec == kube::api_errc::internal_error);
  CHECK(o.res.body == R"({"ok":true})");
}

TEST_CASE("a body that does not gunzip, or an encoding not asked for, is a protocol error", "[compression]") {
  auto bad = exchange([](int) {
    auto r = answer(200);
    r.encoding = "gzip";
    r.body = "plain text, not gzip";
    return r;
  });
  CHECK(bad.ec == kube::client_errc::protocol_error);
  CHECK(bad.res.diag.client_message().find(
            "the gzip-encoded response body (20 bytes) does not decode: invalid gzip data") != std::string::npos);

  auto br = exchange([](int) {
    auto r = answer(200);
    r.encoding = "br";
    return r;
  });
  CHECK(br.ec == kube::client_errc::protocol_error);
  CHECK(br.res.diag.client_message().find(R"(the response is encoded as "br", which was not asked for)") !=
        std::string::npos);

  auto identity = exchange([](int) {
    auto r = answer(200);
    r.encoding = "identity";
    return r;
  });
  CHECK_FALSE(identity.ec);
  CHECK(identity.res.body == R"({"ok":true})");
}
