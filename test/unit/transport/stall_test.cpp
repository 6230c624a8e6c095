// A server that goes silent is found: the read timeout of unary requests
// (re-armed for every read, so a slow but steady answer is never cut), the
// response headers of a watch, and a watch's idle timeout. A watch that
// waits on a silent server ends when its async_next is cancelled (terminal
// only) and leaves nothing behind when its io_context goes away; a second
// async_next while one waits is refused. Events that arrive together are
// handed out from the buffer, each once. A scripted local server
// (test/unit/support/raw_http_server.hpp) plays the silent apiserver.
#include "support/raw_http_server.hpp"

#include <kube/dynamic/dynamic_api.hpp>
#include <kube/rest/client.hpp>
#include <kube/with_diagnostics.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using kube_test::raw_http_server;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using request_t = kube_test::http::request<kube_test::http::string_body>;

namespace {

using steady = std::chrono::steady_clock;

const std::string added_event =
    R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","resourceVersion":"7"}}})"
    "\n";

// Sends the watch's headers and one event, then nothing, for `silence`.
raw_http_server::handler one_event_then_silence(std::chrono::milliseconds silence) {
  return [silence](tcp::socket& s, const request_t&, int) -> asio::awaitable<bool> {
    co_await raw_http_server::write(s, raw_http_server::chunked_head() + raw_http_server::chunk(added_event));
    co_await raw_http_server::sleep(silence);
    co_return false;
  };
}

struct watch_outcome {
  int events = 0;
  std::vector<std::string> names;  ///< metadata.name of each event, in order
  kube::error_code ec;
  kube::diagnostics diag;
  steady::duration after_last_event{};
};

// `pause`: how long the consumer takes over each event before it asks for the next.
watch_outcome watch_until_error(raw_http_server::handler h, std::chrono::milliseconds idle,
                                std::chrono::milliseconds pause = 0ms) {
  asio::io_context io;
  raw_http_server server(io.get_executor(), std::move(h));
  auto c = kube_test::client_of(io.get_executor(), server, 5s);
  kube::dynamic_api api(c, {"", "v1", "configmaps"}, "default");
  watch_outcome out;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        kube::watch_params p;
        p.idle_timeout = idle;
        auto [ec, w] = co_await api.async_watch(p, asio::as_tuple(asio::use_awaitable));
        REQUIRE_FALSE(ec);
        auto last = steady::now();
        for (;;) {
          auto [nec, ev] = co_await w.async_next(kube::with_diagnostics(out.diag, asio::as_tuple(asio::use_awaitable)));
          if (nec) {
            out.ec = nec;
            out.after_last_event = steady::now() - last;
            break;
          }
          ++out.events;
          if (const auto* md = ev.object.if_contains("metadata"); md != nullptr && md->is_object()) {
            if (const auto* n = md->as_object().if_contains("name"); n != nullptr && n->is_string()) {
              out.names.emplace_back(n->as_string());
            }
          }
          if (pause > 0ms) {
            asio::steady_timer busy(io, pause);
            co_await busy.async_wait(asio::use_awaitable);
          }
          last = steady::now();
        }
        server.stop();
        io.stop();
      },
      asio::detached);
  io.run_for(30s);
  return out;
}

struct unary_outcome {
  kube::error_code ec = kube::client_errc::timeout;
  kube::response res;
  steady::duration took{};
};

// One GET /x through a client with this read timeout; stops the server after.
unary_outcome get_once(asio::io_context& io, raw_http_server& server, std::chrono::milliseconds read_timeout) {
  auto c = kube_test::client_of(io.get_executor(), server, read_timeout);
  unary_outcome out;
  const auto start = steady::now();
  c.async_request(kube::request{}.raw_path("/x"), [&](kube::error_code e, kube::response r) {
    out.ec = e;
    out.res = std::move(r);
    out.took = steady::now() - start;
    server.stop();
    io.stop();
  });
  io.run_for(30s);
  return out;
}

// A watch on a server that goes silent, with no idle timeout: only
// cancellation, close() or the io_context's end stop its async_next.
struct cancel_outcome {
  int events = 0;
  kube::error_code waiting;  ///< the async_next that was waiting when the signal came
  kube::error_code later;    ///< the next call after it
  bool open_after = true;
  steady::duration took{};
};

// One event, a second 1.5 s later, then silence.
raw_http_server::handler two_events_apart() {
  return [](tcp::socket& s, const request_t&, int) -> asio::awaitable<bool> {
    co_await raw_http_server::write(s, raw_http_server::chunked_head() + raw_http_server::chunk(added_event));
    co_await raw_http_server::sleep(1500ms);
    co_await raw_http_server::write(s, raw_http_server::chunk(added_event));
    co_await raw_http_server::sleep(20s);
    co_return false;
  };
}

// Opens a watch of default's ConfigMaps and takes its first event.
asio::awaitable<kube::watch_stream> watch_past_first_event(kube::dynamic_api& api) {
  const kube::watch_params p;  // g++ 12: no class temporaries inside a co_await expression
  auto [ec, w] = co_await api.async_watch(p, asio::as_tuple(asio::use_awaitable));
  REQUIRE_FALSE(ec);
  auto [first, ev] = co_await w.async_next(asio::as_tuple(asio::use_awaitable));
  REQUIRE_FALSE(first);
  co_return w;
}

// Reads one event, then asks for the next with a slot that gets `type`
// 200 ms later; once that call ends, asks once more.
cancel_outcome cancel_waiting_next(asio::cancellation_type type) {
  asio::io_context io;
  raw_http_server server(io.get_executor(), two_events_apart());
  auto c = kube_test::client_of(io.get_executor(), server, 5s);
  kube::dynamic_api api(c, {"", "v1", "configmaps"}, "default");
  asio::cancellation_signal sig;
  cancel_outcome out;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto w = co_await watch_past_first_event(api);
        ++out.events;
        asio::steady_timer t(io, 200ms);
        t.async_wait([&](kube::error_code) { sig.emit(type); });
        const auto start = steady::now();
        auto [waiting, ev2] =
            co_await w.async_next(asio::bind_cancellation_slot(sig.slot(), asio::as_tuple(asio::use_awaitable)));
        out.took = steady::now() - start;
        out.waiting = waiting;
        if (!waiting) ++out.events;
        out.open_after = w.is_open();
        asio::steady_timer later(io, 100ms);
        later.async_wait([&](kube::error_code) { w.close(); });  // a live stream would wait 20 s
        auto [next, ev3] = co_await w.async_next(asio::as_tuple(asio::use_awaitable));
        out.later = next;
        server.stop();
        io.stop();
      },
      asio::detached);
  io.run_for(30s);
  return out;
}

// What opening a watch against `h` gave, with read_timeout 400 ms: its
// error, diagnostics and how long it took (the server is stopped then).
struct open_outcome {
  bool done = false;
  kube::error_code ec;
  kube::diagnostics diag;
  steady::duration took{};
};
open_outcome open_watch(raw_http_server::handler h) {
  asio::io_context io;
  raw_http_server server(io.get_executor(), std::move(h));
  auto c = kube_test::client_of(io.get_executor(), server, 400ms);
  kube::dynamic_api api(c, {"", "v1", "configmaps"}, "default");
  open_outcome o;
  const auto start = steady::now();
  api.async_watch(kube::watch_params{}, kube::with_diagnostics(o.diag, [&](kube::error_code e, kube::watch_stream) {
                    o.ec = e;
                    o.done = true;
                    o.took = steady::now() - start;
                    server.stop();
                    io.stop();
                  }));
  io.run_for(30s);
  return o;
}

}  // namespace

TEST_CASE("a watch that goes silent fails with timed_out after its idle timeout", "[stall][watch]") {
  auto o = watch_until_error(one_event_then_silence(20s), 500ms);
  CHECK(o.events == 1);
  CHECK(o.ec == asio::error::timed_out);
  CHECK(o.after_last_event >= 450ms);
  CHECK(o.after_last_event < 5s);
  CHECK(o.diag.client_message().find("idle_timeout") != std::string::npos);
}

TEST_CASE("a watch whose events keep coming is not cut by its idle timeout", "[stall][watch]") {
  auto o = watch_until_error(
      [](tcp::socket& s, const request_t&, int) -> asio::awaitable<bool> {
        co_await raw_http_server::write(s, raw_http_server::chunked_head());
        for (int i = 0; i < 8; ++i) {  // 8 events 200 ms apart: 1.6 s in all, each gap under the 600 ms
          co_await raw_http_server::write(s, raw_http_server::chunk(added_event));
          co_await raw_http_server::sleep(200ms);
        }
        co_await raw_http_server::write(s, raw_http_server::chunk(""));  // the end of the body
        co_return false;
      },
      600ms);
  CHECK(o.events == 8);
  CHECK(o.ec == asio::error::eof);  // the server's clean end, not a timeout
}

TEST_CASE("events that arrive in one read are all handed out from the buffer - then the end of the body",
          "[stall][watch]") {
  // 300 events and the end of the body in one write: after the first read
  // the client parses what it holds without going back to the socket (nor
  // through the scheduler) for each chunk; every event comes out once, in
  // order, then eof. The idle timeout is armed and disarmed around each of
  // those reads from the buffer and must not fire.
  constexpr int n = 300;
  std::string body = raw_http_server::chunked_head();
  std::vector<std::string> want;
  for (int i = 0; i < n; ++i) {
    want.push_back("cm-" + std::to_string(i));
    body += raw_http_server::chunk(
        R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + want.back() +
        R"(","namespace":"default","resourceVersion":")" + std::to_string(100 + i) + "\"}}}\n");
  }
  body += raw_http_server::chunk("");
  auto o = watch_until_error(
      [&body](tcp::socket& s, const request_t&, int) -> asio::awaitable<bool> {
        co_await raw_http_server::write(s, body);
        co_await raw_http_server::sleep(20s);  // the connection stays: only the body's end ends the watch
        co_return false;
      },
      300ms);
  CHECK(o.events == n);
  CHECK(o.names == want);
  CHECK(o.ec == asio::error::eof);
  CHECK(o.after_last_event < 5s);
}

TEST_CASE("a watch whose connection closes between events, before the body's end, fails - it is not the end",
          "[stall][watch]") {
  // An apiserver killed between two events: the connection closes with no
  // last chunk. Only that chunk ends a watch; without it the watch failed
  // (Go: io.ErrUnexpectedEOF), so the reflector's hook hears of the drop.
  auto o = watch_until_error(
      [](tcp::socket& s, const request_t&, int) -> asio::awaitable<bool> {
        co_await raw_http_server::write(s, raw_http_server::chunked_head() + raw_http_server::chunk(added_event));
        co_await raw_http_server::sleep(100ms);
        co_return false;  // closes the connection
      },
      5s);
  CHECK(o.events == 1);
  CHECK(o.ec == kube_test::http::error::partial_message);
  CHECK_THAT(o.diag.client_message(), Catch::Contains("closed between two watch events"));
  CHECK(o.after_last_event < 5s);
}

TEST_CASE("a watch whose consumer is slower than its idle timeout is not cut", "[stall][watch]") {
  // The three events arrive at once and the end of the body 1 s later; the
  // consumer spends 700 ms on each event, more than the 300 ms idle
  // timeout, so for most of the time no read is in flight: only a read
  // that waits counts.
  auto o = watch_until_error(
      [](tcp::socket& s, const request_t&, int) -> asio::awaitable<bool> {
        co_await raw_http_server::write(s, raw_http_server::chunked_head() + raw_http_server::chunk(added_event) +
                                               raw_http_server::chunk(added_event) +
                                               raw_http_server::chunk(added_event));
        co_await raw_http_server::sleep(1s);
        co_await raw_http_server::write(s, raw_http_server::chunk(""));
        co_return false;
      },
      300ms, 700ms);
  CHECK(o.events == 3);
  CHECK(o.ec == asio::error::eof);
}

TEST_CASE("a watch whose response headers never come fails with a timeout", "[stall][watch]") {
  const auto o = open_watch([](tcp::socket&, const request_t&, int) -> asio::awaitable<bool> {
    co_await raw_http_server::sleep(20s);
    co_return false;
  });
  REQUIRE(o.done);
  CHECK(o.ec == kube::client_errc::timeout);
  CHECK(o.took >= 350ms);
  CHECK(o.took < 5s);
  CHECK(o.diag.client_message().find("read_timeout") != std::string::npos);
}

TEST_CASE("a refused watch whose Status body stalls fails after read_timeout with the status it had",
          "[stall][watch]") {
  // 503 with a chunked body: the first bytes of the Status, then nothing.
  const auto o = open_watch([](tcp::socket& s, const request_t&, int) -> asio::awaitable<bool> {
    co_await raw_http_server::write(
        s, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
               raw_http_server::chunk(R"({"kind":"Status","apiVersion":"v1",)"));
    co_await raw_http_server::sleep(20s);
    co_return false;
  });
  REQUIRE(o.done);
  CHECK(o.took < 5s);  // before: until the server went away, 20 s
  CHECK(o.ec == kube::api_errc::service_unavailable);
  CHECK_THAT(o.diag.client_message(), Catch::Contains("503") && Catch::Contains("read_timeout"));
}

TEST_CASE("a unary answer that stops mid-body fails with a timeout after read_timeout", "[stall][unary]") {
  asio::io_context io;
  raw_http_server server(io.get_executor(), [](tcp::socket& s, const request_t&, int) -> asio::awaitable<bool> {
    co_await raw_http_server::write(
        s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":");
    co_await raw_http_server::sleep(20s);
    co_return false;
  });
  const auto o = get_once(io, server, 400ms);
  CHECK(o.ec == kube::client_errc::timeout);
  CHECK(o.took >= 350ms);
  CHECK(o.took < 5s);
  CHECK(o.res.diag.client_message().find("for 400 ms (client_params::read_timeout)") != std::string::npos);
  CHECK(server.requests().size() == 1);  // a timeout is not replayed
}

TEST_CASE("a unary answer that arrives slowly but steadily is not cut by read_timeout", "[stall][unary]") {
  asio::io_context io;
  raw_http_server server(io.get_executor(), [](tcp::socket& s, const request_t&, int) -> asio::awaitable<bool> {
    const std::string body = R"({"items":[1,2,3,4,5,6,7,8]})";
    co_await raw_http_server::write(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                           std::to_string(body.size()) + "\r\n\r\n");
    for (char ch : body) {  // 27 bytes 60 ms apart: 1.6 s in all, each gap far under 400 ms
      co_await raw_http_server::write(s, std::string(1, ch));
      co_await raw_http_server::sleep(60ms);
    }
    co_return true;
  });
  const auto o = get_once(io, server, 400ms);
  CHECK_FALSE(o.ec);
  CHECK(o.res.status == 200);
  CHECK(o.res.body == R"({"items":[1,2,3,4,5,6,7,8]})");
}

TEST_CASE("cancelling async_next while it waits for data ends the watch with operation_aborted",
          "[stall][watch][cancel]") {
  const auto o = cancel_waiting_next(asio::cancellation_type::terminal);
  CHECK(o.events == 1);
  CHECK(o.waiting == asio::error::operation_aborted);
  CHECK(o.took < 1s);  // at the signal, not at the second event
  CHECK_FALSE(o.open_after);
  CHECK(o.later == asio::error::operation_aborted);  // and every later call
}

TEST_CASE("a partial cancellation of async_next is ignored: the watch goes on", "[stall][watch][cancel]") {
  const auto o = cancel_waiting_next(asio::cancellation_type::partial);
  CHECK(o.events == 2);  // the waiting call got the second event
  CHECK_FALSE(o.waiting);
  CHECK(o.took >= 1s);
  CHECK(o.open_after);
  CHECK(o.later == asio::error::operation_aborted);  // closed while it waited
}

TEST_CASE("an io_context destroyed while async_next waits leaves nothing behind", "[stall][watch]") {
  // No cancellation, no close: the io_context goes away with the read in
  // flight. The waiter (with the consumer's coroutine, which holds the
  // stream) is owned by the read, so LeakSanitizer finds nothing here; a
  // stream that kept its waiter would leak the stream and the coroutine.
  bool waiting = false;
  {
    asio::io_context io;
    raw_http_server server(io.get_executor(), one_event_then_silence(20s));
    auto c = kube_test::client_of(io.get_executor(), server, 5s);
    kube::dynamic_api api(c, {"", "v1", "configmaps"}, "default");
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          auto w = co_await watch_past_first_event(api);
          waiting = true;
          co_await w.async_next(asio::as_tuple(asio::use_awaitable));
          FAIL("the silent stream gave something");
        },
        asio::detached);
    io.run_for(500ms);
  }
  CHECK(waiting);
}

TEST_CASE("a second async_next while one waits is refused with in_progress and the first gets its event",
          "[stall][watch]") {
  asio::io_context io;
  raw_http_server server(io.get_executor(), two_events_apart());
  auto c = kube_test::client_of(io.get_executor(), server, 5s);
  kube::dynamic_api api(c, {"", "v1", "configmaps"}, "default");
  kube::error_code first = asio::error::would_block;  // not completed yet
  kube::error_code second;
  kube::diagnostics second_diag;
  bool first_done_before_second = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto w = co_await watch_past_first_event(api);
        w.async_next([&](kube::error_code ec, kube::watch_event) {
          first = ec;
          server.stop();
          io.stop();
        });
        auto [ec, ev] = co_await w.async_next(kube::with_diagnostics(second_diag, asio::as_tuple(asio::use_awaitable)));
        second = ec;
        first_done_before_second = first != asio::error::would_block;
      },
      asio::detached);
  io.run_for(30s);
  CHECK(second == asio::error::in_progress);
  CHECK(second_diag.client_message().find("another async_next") != std::string::npos);
  CHECK_FALSE(first_done_before_second);
  CHECK_FALSE(first);  // the waiting call got the second event
}
