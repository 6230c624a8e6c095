// kube::prometheus::metrics_server on 127.0.0.1 (a free port), on one
// io_context, driven by a raw-socket client: what a scraper sends, what
// a bad or slow client sends, and the end of the run.
#include <kube/prometheus/metrics_server.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/system_error.hpp>

#include <catch2/catch.hpp>

#include <cctype>
#include <chrono>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace asio = boost::asio;
namespace kp = kube::prometheus;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using namespace std::chrono_literals;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// No co_await inside a Catch2 macro: g++ 12 also evaluates the expression
// inside the macro's __builtin_constant_p, so the operation runs twice.

struct response {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
};

// Reads one response; `buf` keeps whatever follows it. `head`: the answer
// to a HEAD, which has no body whatever its Content-Length says.
asio::awaitable<response> read_response(tcp::socket& s, std::string& buf, bool head = false) {
  const auto n = co_await asio::async_read_until(s, asio::dynamic_buffer(buf), "\r\n\r\n", asio::use_awaitable);
  response r;
  const std::string header = buf.substr(0, n);
  buf.erase(0, n);
  std::size_t at = header.find("\r\n");
  const std::string status_line = header.substr(0, at);
  REQUIRE(status_line.rfind("HTTP/1.", 0) == 0);
  r.status = std::stoi(status_line.substr(9, 3));
  for (at += 2; at < header.size();) {
    const auto end = header.find("\r\n", at);
    const auto line = header.substr(at, end - at);
    at = end + 2;
    if (line.empty()) break;
    const auto colon = line.find(':');
    std::string name = line.substr(0, colon);
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    r.headers[name] = value;
  }
  const std::size_t length = head ? 0 : std::stoul(r.headers.at("content-length"));
  if (buf.size() < length) {
    co_await asio::async_read(s, asio::dynamic_buffer(buf), asio::transfer_exactly(length - buf.size()),
                              asio::use_awaitable);
  }
  r.body = buf.substr(0, length);
  buf.erase(0, length);
  co_return r;
}

asio::awaitable<void> send(tcp::socket& s, const std::string& bytes) {
  co_await asio::async_write(s, asio::buffer(bytes), asio::use_awaitable);
}

asio::awaitable<tcp::socket> connect(unsigned short port) {
  tcp::socket s(co_await asio::this_coro::executor);
  co_await s.async_connect({asio::ip::make_address("127.0.0.1"), port}, asio::use_awaitable);
  co_return s;
}

// Waits until the server closes `s`: the read ends with eof (or a reset,
// when it closed with bytes unread), and no byte comes before.
asio::awaitable<error_code> closed_by_server(tcp::socket& s) {
  char c = 0;
  asio::steady_timer guard(s.get_executor(), 5s);  // a hang fails the test instead of blocking it
  guard.async_wait([&](error_code ec) {
    if (!ec) s.close();
  });
  auto [ec, n] = co_await s.async_read_some(asio::buffer(&c, 1), use_tuple);
  guard.cancel();
  CHECK(n == 0);
  co_return ec;
}

bool is_close(const error_code& ec) { return ec == asio::error::eof || ec == asio::error::connection_reset; }

// A server on a free port, its run, and the test's client coroutine.
struct fixture {
  asio::io_context io;
  std::shared_ptr<kp::metrics> metrics = std::make_shared<kp::metrics>();
  kp::metrics_server server{io.get_executor(), metrics, {.port = 0}};
  asio::cancellation_signal stop;
  std::optional<error_code> run_result;

  fixture() {
    metrics->workqueue("jobs")->on_add();
    server.async_run(asio::bind_cancellation_slot(stop.slot(), [this](error_code ec) { run_result = ec; }));
  }

  // Runs `client` to its end (at most 20 s), then rethrows what it threw.
  void run(std::function<asio::awaitable<void>()> client) {
    bool done = false;
    std::exception_ptr failure;
    asio::co_spawn(io, std::move(client), [&](std::exception_ptr e) {
      failure = e;
      done = true;
      if (!run_result) stop.emit(asio::cancellation_type::terminal);  // the test is over: end the run
    });
    io.run_for(20s);
    if (failure) std::rethrow_exception(failure);
    REQUIRE(done);
  }
};

}  // namespace

TEST_CASE("server: GET /metrics answers the text format on a kept-alive connection, 404, 405, HEAD",
          "[prometheus][server]") {
  fixture f;
  REQUIRE(f.server.port() != 0);
  f.run([&]() -> asio::awaitable<void> {
    auto s = co_await connect(f.server.port());
    std::string buf;

    co_await send(s, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
    auto r = co_await read_response(s, buf);
    CHECK(r.status == 200);
    CHECK(r.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8");
    CHECK(r.headers["content-length"] == std::to_string(r.body.size()));
    CHECK(r.headers.count("connection") == 0);  // HTTP/1.1: kept alive
    CHECK_THAT(r.body, Catch::Contains("# TYPE workqueue_adds_total counter\n"));
    CHECK_THAT(r.body, Catch::Contains("\nworkqueue_adds_total{name=\"jobs\"} 1\n"));
    CHECK(r.body == f.metrics->render());

    // rendered on each request
    f.metrics->workqueue("jobs")->on_add();
    co_await send(s, "GET /metrics?debug=1 HTTP/1.1\r\nHost: localhost\r\n\r\n");
    r = co_await read_response(s, buf);
    CHECK(r.status == 200);
    CHECK_THAT(r.body, Catch::Contains("\nworkqueue_adds_total{name=\"jobs\"} 2\n"));

    co_await send(s, "GET /other HTTP/1.1\r\nHost: localhost\r\n\r\n");
    r = co_await read_response(s, buf);
    CHECK(r.status == 404);
    CHECK_THAT(r.headers["content-type"], Catch::StartsWith("text/plain"));

    co_await send(s, "GET /metrics/ HTTP/1.1\r\nHost: localhost\r\n\r\n");
    r = co_await read_response(s, buf);
    CHECK(r.status == 404);

    co_await send(s, "POST /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n\r\nx=1");
    r = co_await read_response(s, buf);
    CHECK(r.status == 405);
    CHECK(r.headers["allow"] == "GET, HEAD");

    co_await send(s, "HEAD /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
    r = co_await read_response(s, buf, true);
    CHECK(r.status == 200);
    CHECK(r.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8");
    CHECK(r.headers["content-length"] == std::to_string(f.metrics->render().size()));

    // pipelined: both answered, in order (and the HEAD above sent no body)
    co_await send(s, "GET /nope HTTP/1.1\r\nHost: localhost\r\n\r\nGET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
    r = co_await read_response(s, buf);
    CHECK(r.status == 404);
    r = co_await read_response(s, buf);
    CHECK(r.status == 200);
    CHECK(buf.empty());

    // Connection: close is honoured
    co_await send(s, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    r = co_await read_response(s, buf);
    CHECK(r.status == 200);
    CHECK(r.headers["connection"] == "close");
    const auto ec_s = co_await closed_by_server(s);
    CHECK(is_close(ec_s));

    // HTTP/1.0 without keep-alive: one answer, then closed
    auto s10 = co_await connect(f.server.port());
    std::string buf10;
    co_await send(s10, "GET /metrics HTTP/1.0\r\n\r\n");
    r = co_await read_response(s10, buf10);
    CHECK(r.status == 200);
    const auto ec_s10 = co_await closed_by_server(s10);
    CHECK(is_close(ec_s10));
  });
  REQUIRE(f.run_result);
  CHECK(*f.run_result == asio::error::operation_aborted);
}

TEST_CASE("server: cancelling async_run completes it with operation_aborted and closes every connection",
          "[prometheus][server]") {
  fixture f;
  f.run([&]() -> asio::awaitable<void> {
    auto idle = co_await connect(f.server.port());  // kept alive after an answer
    std::string buf;
    co_await send(idle, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
    auto r = co_await read_response(idle, buf);
    CHECK(r.status == 200);
    auto partial = co_await connect(f.server.port());  // in the middle of a request
    co_await send(partial, "GET /metrics HTTP/1.1\r\nHo");
    auto silent = co_await connect(f.server.port());  // nothing sent yet
    asio::steady_timer settle(co_await asio::this_coro::executor, 50ms);
    co_await settle.async_wait(asio::use_awaitable);  // all three accepted
    CHECK_FALSE(f.run_result);

    f.stop.emit(asio::cancellation_type::terminal);
    const auto ec_idle = co_await closed_by_server(idle);
    CHECK(is_close(ec_idle));
    const auto ec_partial = co_await closed_by_server(partial);
    CHECK(is_close(ec_partial));
    const auto ec_silent = co_await closed_by_server(silent);
    CHECK(is_close(ec_silent));
    REQUIRE(f.run_result);
    CHECK(*f.run_result == asio::error::operation_aborted);

    // the listener is closed too
    tcp::socket late(co_await asio::this_coro::executor);
    auto [ec] = co_await late.async_connect({asio::ip::make_address("127.0.0.1"), f.server.port()}, use_tuple);
    CHECK(ec == asio::error::connection_refused);
  });
}

TEST_CASE("server: a slow client holds up nobody, a request over the limits is closed unanswered",
          "[prometheus][server]") {
  fixture f;
  f.run([&]() -> asio::awaitable<void> {
    auto slow = co_await connect(f.server.port());
    co_await send(slow, "GET /metr");

    auto quick = co_await connect(f.server.port());
    std::string buf;
    co_await send(quick, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
    auto r = co_await read_response(quick, buf);
    CHECK(r.status == 200);

    co_await send(slow, "ics HTTP/1.1\r\nHost: localhost\r\n\r\n");
    std::string slow_buf;
    r = co_await read_response(slow, slow_buf);
    CHECK(r.status == 200);

    // a header over 8 KiB
    auto big = co_await connect(f.server.port());
    co_await send(big, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nX-Big: " + std::string(9000, 'a') + "\r\n\r\n");
    const auto ec_big = co_await closed_by_server(big);
    CHECK(is_close(ec_big));

    // a body over 8 KiB
    auto body = co_await connect(f.server.port());
    co_await send(body, "POST /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n" +
                            std::string(9000, 'b'));
    const auto ec_body = co_await closed_by_server(body);
    CHECK(is_close(ec_body));

    // not HTTP
    auto junk = co_await connect(f.server.port());
    co_await send(junk, "hello\r\n\r\n");
    const auto ec_junk = co_await closed_by_server(junk);
    CHECK(is_close(ec_junk));

    // the server still answers
    co_await send(quick, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
    r = co_await read_response(quick, buf);
    CHECK(r.status == 200);
  });
  REQUIRE(f.run_result);
  CHECK(*f.run_result == asio::error::operation_aborted);
}

TEST_CASE("server: one run at a time, and none after the end", "[prometheus][server]") {
  fixture f;
  std::optional<error_code> second;
  f.server.async_run([&](error_code ec) { second = ec; });
  f.run([&]() -> asio::awaitable<void> {
    asio::steady_timer settle(co_await asio::this_coro::executor, 10ms);
    co_await settle.async_wait(asio::use_awaitable);
    REQUIRE(second);
    CHECK(*second == asio::error::already_started);
    CHECK_FALSE(f.run_result);  // the first goes on
    co_return;
  });
  REQUIRE(f.run_result);
  CHECK(*f.run_result == asio::error::operation_aborted);

  std::optional<error_code> after;
  f.server.async_run([&](error_code ec) { after = ec; });
  f.io.restart();
  f.io.run_for(5s);
  REQUIRE(after);
  CHECK(*after);
  CHECK(*after != asio::error::already_started);
}

TEST_CASE("server: the constructor throws naming the address and port it cannot listen on", "[prometheus][server]") {
  asio::io_context io;
  auto m = std::make_shared<kp::metrics>();
  kp::metrics_server first(io.get_executor(), m, {.port = 0});
  const auto where = "127.0.0.1:" + std::to_string(first.port());
  CHECK_THROWS_MATCHES(kp::metrics_server(io.get_executor(), m, {.port = first.port()}), boost::system::system_error,
                       Catch::Matchers::Predicate<boost::system::system_error>(
                           [&](const boost::system::system_error& e) {
                             return e.code() == asio::error::address_in_use &&
                                    std::string(e.what()).find(where) != std::string::npos;
                           },
                           "address_in_use, naming " + where));
  CHECK_THROWS_AS(kp::metrics_server(io.get_executor(), m, {.address = "localhost", .port = 0}),
                  boost::system::system_error);
  CHECK_THROWS_AS(kp::metrics_server(io.get_executor(), nullptr, {.port = 0}), std::invalid_argument);
}

TEST_CASE("server: async_run with the default token is awaitable", "[prometheus][server]") {
  asio::io_context io;
  auto m = std::make_shared<kp::metrics>();
  kp::metrics_server srv(io.get_executor(), m, {.port = 0});
  asio::cancellation_signal stop;
  std::optional<error_code> result;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        try {
          co_await srv.async_run();
        } catch (const boost::system::system_error& e) {
          result = e.code();
        }
      },
      asio::bind_cancellation_slot(stop.slot(), [](std::exception_ptr e) {
        if (e) std::rethrow_exception(e);
      }));
  io.poll();
  stop.emit(asio::cancellation_type::terminal);
  io.run_for(5s);
  REQUIRE(result);
  CHECK(*result == asio::error::operation_aborted);
}
