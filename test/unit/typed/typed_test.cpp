// kube::api<T> without a cluster: typed watch events, retry_on_conflict with
// a fake operation and a recording sleeper, the backoff sequence, write
// bodies, client-side refusals, and the verbs against a scripted local HTTP
// server (decode errors naming the field and object, list_all paging,
// delete answering an object or a Status, log lines split at any chunk).
// Size: about 1,000 lines of test cases sharing one scripted server and its
// fixtures; a case is found by its [tag].
#include "support/raw_http_server.hpp"
#include "test_types.hpp"

#include <kube/streams/pod_streams.hpp>
#include <kube/rest/write_observer.hpp>
#include <kube/tools/retry.hpp>
#include <kube/typed/api.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using k8s::core::v1::ConfigMap;
using k8s::core::v1::Namespace;
using k8s::core::v1::Pod;

namespace {

kube::watch_event raw_event(kube::watch_event_type type, std::string_view object) {
  kube::watch_event ev;
  ev.type = type;
  ev.object = json::parse(object).as_object();
  return ev;
}

// ---- a scripted HTTP server: each request gets raw response bytes, written
// in the pieces the test gives (so chunk and read boundaries fall anywhere),
// then the connection closes. On the local test server of the wire tests.
struct scripted_server {
  using script_fn = std::function<std::vector<std::string>(const http::request<http::string_body>&)>;
  scripted_server(asio::any_io_executor ex, script_fn f)
      : server(std::move(ex),
               [this, f = std::move(f)](tcp::socket& sock, const http::request<http::string_body>& req,
                                        int) -> asio::awaitable<bool> {
                 targets.emplace_back(req.target());
                 for (const auto& piece : f(req)) co_await kube_test::raw_http_server::write(sock, piece);
                 co_return false;
               }) {}
  std::vector<std::string> targets;
  kube_test::raw_http_server server;

  [[nodiscard]] std::string url() const { return server.url(); }
};

std::string json_response(unsigned status, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: application/json\r\nConnection: close\r\n" +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// Runs `body(client)` as a coroutine next to the scripted server.
template <class F>
void with_server(scripted_server::script_fn script, F body, std::vector<std::string>* targets = nullptr) {
  asio::io_context io;
  scripted_server server(io.get_executor(), std::move(script));
  auto c = kube_test::client_of(io.get_executor(), server.server);
  std::exception_ptr failure;
  bool done = false;
  asio::co_spawn(io, body(c), [&](std::exception_ptr e) {
    failure = e;
    done = true;
    io.stop();
  });
  io.run_for(std::chrono::seconds(30));
  REQUIRE(done);
  if (targets) *targets = server.targets;
  if (failure) std::rethrow_exception(failure);
}

// The code and message of the kube::error the watch's next event fails
// with; the test fails if an event comes instead.
template <class Watch>
asio::awaitable<std::pair<kube::error_code, std::string>> next_fails(Watch& w) {
  try {
    co_await w.async_next();
  } catch (const kube::error& e) {
    co_return std::pair{e.code(), e.diag().client_message()};
  }
  FAIL("no exception");
  co_return std::pair<kube::error_code, std::string>{};
}

// A client whose server does not exist: for refusals that must happen
// before any request.
struct offline {
  asio::io_context io;
  kube::client c = kube::detail::client_access::make(io.get_executor(), [] {
    kube::detail::transport_params s;
    s.server = "http://127.0.0.1:1";
    return s;
  }());
};

}  // namespace

// ---- typed watch events -----------------------------------------------------------

TEST_CASE("decode_watch_event: ADDED/MODIFIED/DELETED decode the object into T", "[typed][watch]") {
  for (auto type : {kube::watch_event_type::added, kube::watch_event_type::modified, kube::watch_event_type::deleted}) {
    kube::typed_watch_event<ConfigMap> out;
    kube::diagnostics diag;
    auto ec = kube::decode_watch_event(
        raw_event(
            type,
            R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n","resourceVersion":"42"},"data":{"k":"v"},"extra":1})"),
        out, diag);
    REQUIRE_FALSE(ec);
    CHECK(out.type == type);
    CHECK(out.resource_version == "42");
    CHECK(out.object.name() == "a");
    CHECK(out.object.namespace_() == "n");
    CHECK(out.object.data->at("k") == "v");
    CHECK(out.object.unknown_fields.find("extra") != nullptr);  // unknown members kept
  }
}

// A typed watch's decoder reads objects into T itself (watch_event::decoded,
// see watch_decoder_params::objects); translating such an event takes the
// object, copies it when copies of the event share it, and refuses an
// object of another type.
TEST_CASE("decode_watch_event: an object the decoder already read into T", "[typed][watch]") {
  auto cm = std::make_shared<ConfigMap>();
  cm->metadata.name = "a";
  cm->metadata.resource_version = "7";
  kube::watch_event ev;
  ev.type = kube::watch_event_type::modified;
  ev.decoded = cm;
  ev.decoded_type = &typeid(ConfigMap);
  // `cm` and this event share it, and decode_watch_event takes a copy of
  // the event: both decodes must see the object.
  for (int i = 0; i < 2; ++i) {
    kube::typed_watch_event<ConfigMap> out;
    kube::diagnostics diag;
    REQUIRE_FALSE(kube::decode_watch_event(ev, out, diag));
    CHECK(out.type == kube::watch_event_type::modified);
    CHECK(out.object.name() == "a");
    CHECK(out.resource_version == "7");
  }
  CHECK(cm->name() == "a");
  kube::typed_watch_event<Namespace> other;
  kube::diagnostics diag;
  CHECK(kube::decode_watch_event(ev, other, diag) == kube::client_errc::decode_error);
  CHECK(diag.client_message() == "watch event: MODIFIED event decoded into another type than the watch's");
}

TEST_CASE("decode_watch_event: a BOOKMARK carries only the resourceVersion, even if it does not fit T",
          "[typed][watch]") {
  kube::typed_watch_event<ConfigMap> out;
  kube::diagnostics diag;
  // A bookmark's partial object: "data" of the wrong type would not decode.
  auto ec = kube::decode_watch_event(
      raw_event(
          kube::watch_event_type::bookmark,
          R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"77","annotations":{"k8s.io/initial-events-end":"true"}},"data":7})"),
      out, diag);
  REQUIRE_FALSE(ec);
  CHECK(out.type == kube::watch_event_type::bookmark);
  CHECK(out.resource_version == "77");
  CHECK(out.initial_events_end);  // the end of a streaming list's initial events
  ec = kube::decode_watch_event(
      raw_event(kube::watch_event_type::bookmark, R"({"kind":"ConfigMap","metadata":{"resourceVersion":"78"}})"), out,
      diag);
  REQUIRE_FALSE(ec);
  CHECK(out.resource_version == "78");
  CHECK_FALSE(out.initial_events_end);
}

TEST_CASE("decode_watch_event: ERROR becomes the Status's error code with the Status in diagnostics",
          "[typed][watch]") {
  kube::typed_watch_event<ConfigMap> out;
  kube::diagnostics diag;
  auto ec = kube::decode_watch_event(
      raw_event(
          kube::watch_event_type::error,
          R"x({"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410})x"),
      out, diag);
  CHECK(ec == kube::api_errc::expired);
  CHECK(kube::is_resource_expired(ec));
  REQUIRE(diag.server_status());
  CHECK(diag.server_message() == "too old resource version: 1 (5)");

  // A Status without reason or code still is an error.
  kube::diagnostics d2;
  auto ec2 = kube::decode_watch_event(raw_event(kube::watch_event_type::error, R"({"kind":"Status"})"), out, d2);
  CHECK(ec2);
}

TEST_CASE("decode_watch_event: an object that does not fit T names the event, object and field path",
          "[typed][watch]") {
  kube::typed_watch_event<ConfigMap> out;
  kube::diagnostics diag;
  auto ec = kube::decode_watch_event(
      raw_event(kube::watch_event_type::modified,
                R"({"kind":"ConfigMap","metadata":{"name":"bad","resourceVersion":"9"},"data":{"k":5}})"),
      out, diag);
  CHECK(ec == kube::client_errc::decode_error);
  const auto& m = diag.client_message();
  INFO(m);
  CHECK(m.find("MODIFIED") != std::string::npos);
  CHECK(m.find("\"bad\"") != std::string::npos);
  CHECK(m.find(".data.k") != std::string::npos);
  CHECK(m.find("expected a string") != std::string::npos);
}

// ---- backoff and retry_on_conflict ---------------------------------------------------

TEST_CASE("backoff steps follow client-go's wait.Backoff", "[typed][retry]") {
  using std::chrono::microseconds;
  using std::chrono::milliseconds;
  auto b = kube::default_retry;
  CHECK(b.steps == 5);
  CHECK(b.step(0.0) == milliseconds(10));
  CHECK(b.step(0.5) == microseconds(10500));  // + 0.5 * 10% jitter
  CHECK(b.step(0.999).count() < milliseconds(11).count() * 1000 * 1000);
  CHECK(b.steps == 2);

  auto d = kube::default_backoff;  // 10 ms x5
  CHECK(d.step(0.0) == milliseconds(10));
  CHECK(d.step(0.0) == milliseconds(50));
  CHECK(d.step(0.0) == milliseconds(250));

  kube::backoff capped{milliseconds(10), 10.0, 0.0, 10, milliseconds(50)};
  CHECK(capped.step(0.5) == milliseconds(10));  // no jitter configured
  CHECK(capped.step(0.5) == milliseconds(50));  // 100 capped to 50, and the cap ends the steps
  CHECK(capped.steps == 0);
  CHECK(capped.step(0.5) == milliseconds(50));  // held at the cap
  CHECK(capped.steps == 0);

  // Steps used up: the pause stays where it got to (Step with Steps < 1).
  kube::backoff few{milliseconds(10), 2.0, 0.0, 1, {}};
  CHECK(few.step(0.0) == milliseconds(10));
  CHECK(few.step(0.0) == milliseconds(20));
  CHECK(few.step(0.0) == milliseconds(20));
  CHECK(few.steps == 0);
}

namespace {
struct recording_sleep {
  std::vector<std::chrono::nanoseconds>* slept;
  asio::awaitable<void> operator()(std::chrono::nanoseconds d) const {
    slept->push_back(d);
    co_return;
  }
};

kube::error api_error(kube::api_errc e) { return kube::error(e, std::string("fake")); }

template <class F>
void run_coro(F f) {
  asio::io_context io;
  std::exception_ptr failure;
  bool done = false;
  asio::co_spawn(io, f(), [&](std::exception_ptr e) {
    failure = e;
    done = true;
  });
  io.run();
  REQUIRE(done);
  if (failure) std::rethrow_exception(failure);
}
}  // namespace

TEST_CASE("retry_on_conflict retries conflicts with DefaultRetry's pauses, then returns the result", "[typed][retry]") {
  int calls = 0;
  std::vector<std::chrono::nanoseconds> slept;
  run_coro([&]() -> asio::awaitable<void> {
    auto v = co_await kube::retry_on_conflict(
        [&]() -> asio::awaitable<int> {
          if (++calls < 3) throw api_error(kube::api_errc::conflict);
          co_return 42;
        },
        kube::default_retry, recording_sleep{&slept});
    CHECK(v == 42);
  });
  CHECK(calls == 3);
  REQUIRE(slept.size() == 2);
  for (auto d : slept) {
    CHECK(d >= std::chrono::milliseconds(10));
    CHECK(d <= std::chrono::microseconds(11000));
  }
}

TEST_CASE("retry_on_conflict gives up after 5 attempts and rethrows the conflict", "[typed][retry]") {
  int calls = 0;
  std::vector<std::chrono::nanoseconds> slept;
  kube::error_code seen;
  run_coro([&]() -> asio::awaitable<void> {
    try {
      co_await kube::retry_on_conflict(
          [&]() -> asio::awaitable<void> {
            ++calls;
            throw api_error(kube::api_errc::conflict);
            co_return;
          },
          kube::default_retry, recording_sleep{&slept});
    } catch (const kube::error& e) {
      seen = e.code();
    }
  });
  CHECK(calls == 5);
  CHECK(slept.size() == 4);
  CHECK(seen == kube::api_errc::conflict);
}

TEST_CASE("retry_on_conflict does not retry other errors", "[typed][retry]") {
  int calls = 0;
  std::vector<std::chrono::nanoseconds> slept;
  kube::error_code seen;
  run_coro([&]() -> asio::awaitable<void> {
    try {
      co_await kube::retry_on_conflict(
          [&]() -> asio::awaitable<void> {
            ++calls;
            throw api_error(kube::api_errc::not_found);
            co_return;
          },
          kube::default_retry, recording_sleep{&slept});
    } catch (const kube::error& e) {
      seen = e.code();
    }
  });
  CHECK(calls == 1);
  CHECK(slept.empty());
  CHECK(seen == kube::api_errc::not_found);
}

TEST_CASE("retry_on_conflict with the real sleeper waits on the caller's executor", "[typed][retry]") {
  int calls = 0;
  const auto start = std::chrono::steady_clock::now();
  run_coro([&]() -> asio::awaitable<void> {
    co_await kube::retry_on_conflict([&]() -> asio::awaitable<void> {
      if (++calls < 2) throw api_error(kube::api_errc::conflict);
      co_return;
    });
  });
  CHECK(calls == 2);
  // One pause of at least DefaultRetry's 10 ms happened (a lower bound only).
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(10));
}

// ---- bodies and client-side refusals ------------------------------------------------

TEST_CASE("write bodies get apiVersion and kind from the traits unless the object sets them", "[typed][encode]") {
  ConfigMap cm;
  cm.metadata.name = "a";
  cm.metadata.namespace_ = "n";
  cm.data.emplace()["k"] = "v";
  auto b = kube::detail::encode_typed(cm, "v1", "ConfigMap");
  auto v = json::parse(b.body).as_object();
  CHECK(v.at("apiVersion") == "v1");
  CHECK(v.at("kind") == "ConfigMap");
  CHECK(b.name == "a");
  CHECK(b.namespace_name == "n");

  cm.kind = "Other";
  auto b2 = kube::detail::encode_typed(cm, "v1", "ConfigMap");
  CHECK(json::parse(b2.body).as_object().at("kind") == "Other");
}

TEST_CASE("api_status round-trips through its codec", "[typed][encode]") {
  auto s = kube::from_json<kube::api_status>(
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","message":"x","code":404,"details":{"name":"a","uid":"u"}})");
  CHECK(s.status == "Failure");
  CHECK(s.reason == "NotFound");
  CHECK(s.code == 404);
  CHECK(s.details_name == "a");
  CHECK(s.details_uid == "u");
  auto again = kube::from_json<kube::api_status>(kube::to_json(s));
  CHECK(again.message == "x");
  CHECK(again.details_uid == "u");
  CHECK_THROWS_AS(kube::from_json<kube::api_status>(R"({"code":"no"})"), kube::decode_error);
}

TEST_CASE("a cluster-scoped kind refuses a namespace at construction", "[typed]") {
  offline o;
  CHECK_THROWS_AS(kube::api<Namespace>(o.c, "x"), kube::error);
  CHECK_NOTHROW(kube::api<Namespace>(o.c));
}

TEST_CASE("operations that cannot be addressed fail before any request", "[typed]") {
  offline o;
  kube::api<ConfigMap> all(o.c);  // all namespaces
  kube::api<ConfigMap> demo(o.c, "demo");
  std::vector<kube::error_code> codes;
  std::vector<std::string> messages;
  auto record = [&](kube::error_code ec, auto&&) { codes.push_back(ec); };

  all.async_get("x", record);                                    // no namespace
  demo.async_get("", record);                                    // no name
  demo.async_patch("x", kube::patch_type::apply, "{}", record);  // apply without field manager
  ConfigMap nameless;
  demo.async_replace(nameless, record);
  all.async_delete("x", record);
  kube::api<Pod> pods(o.c);
  kube::async_logs(pods, "p", record);
  o.io.run_for(std::chrono::seconds(10));
  REQUIRE(codes.size() == 6);
  for (auto ec : codes) CHECK(ec == kube::client_errc::invalid_config);
}

TEST_CASE("empty streams answer with an error, not a crash", "[typed]") {
  asio::io_context io;
  kube::typed_watch_stream<ConfigMap> w;
  kube::log_stream l;
  kube::error_code wec, lec, sec;
  w.async_next([&](kube::error_code ec, kube::typed_watch_event<ConfigMap>) { wec = ec; });
  l.async_read_line([&](kube::error_code ec, std::string) { lec = ec; });
  char b[8];
  l.async_read_some(asio::buffer(b), [&](kube::error_code ec, std::size_t) { sec = ec; });
  io.run();
  CHECK(wec == kube::client_errc::watch_stream_error);
  CHECK(lec == kube::client_errc::protocol_error);
  CHECK(sec == kube::client_errc::protocol_error);
}

// ---- against a scripted server ---------------------------------------------------------

TEST_CASE("a body that does not fit T is a decode_error naming the object and the field path", "[typed][decode]") {
  with_server(
      [](const auto&) {
        return std::vector<std::string>{
            json_response(200, R"({"kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":[1]}})")};
      },
      [](kube::client c) -> asio::awaitable<void> {
        kube::api<ConfigMap> cms(c, "demo");
        auto [ec, cm] = co_await cms.async_get("a", asio::as_tuple(asio::use_awaitable));
        CHECK(ec == kube::client_errc::decode_error);
        CHECK_FALSE(cm.data);  // no partial result
        // With kube::use_awaitable the exception carries the message.
        try {
          co_await cms.async_get("a");
          FAIL("no exception");
        } catch (const kube::error& e) {
          const std::string m = e.diag().client_message();
          INFO(m);
          CHECK(e.code() == kube::client_errc::decode_error);
          CHECK(m.find("get configmaps in namespace demo \"a\"") != std::string::npos);
          CHECK(m.find(".data.k: expected a string") != std::string::npos);
        }
        // Asio's own use_awaitable keeps them too (it used to throw a plain
        // system_error whose message was the code's).
        try {
          co_await cms.async_get("a", asio::use_awaitable);
          FAIL("no exception");
        } catch (const kube::error& e) {
          CHECK(e.code() == kube::client_errc::decode_error);
          CHECK_THAT(std::string(e.what()), Catch::Contains(".data.k: expected a string"));
        }
      });
}

TEST_CASE("list_all follows continue tokens, decodes each page, and names a misfit item", "[typed][list]") {
  std::vector<std::string> targets;
  with_server(
      [](const http::request<http::string_body>& req) {
        const std::string t(req.target());
        std::string body;
        if (t.find("continue=p2") != std::string::npos) {
          body =
              R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"2","continue":"p3","remainingItemCount":1},"items":[{"metadata":{"name":"c"}}]})";
        } else if (t.find("continue=p3") != std::string::npos) {
          body = R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"3"},"items":[{"metadata":{"name":"d"}}]})";
        } else if (t.find("labelSelector=bad") != std::string::npos) {
          body =
              R"({"kind":"ConfigMapList","metadata":{},"items":[{"metadata":{"name":"ok","namespace":"n"}},{"metadata":{"name":"wrong","namespace":"n"},"data":{"k":false}}]})";
        } else {
          body =
              R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"1","continue":"p2","remainingItemCount":2},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})";
        }
        return std::vector<std::string>{json_response(200, body)};
      },
      [](kube::client c) -> asio::awaitable<void> {
        kube::api<ConfigMap> cms(c, "demo");
        kube::list_params p;
        p.limit = 2;
        auto all = co_await cms.async_list_all(p);
        REQUIRE(all.items.size() == 4);
        CHECK(all.items[0].name() == "a");
        CHECK(all.items[3].name() == "d");
        REQUIRE(all.metadata);
        CHECK(all.metadata->resource_version == "1");  // the first page's snapshot
        CHECK_FALSE(all.metadata->continue_);
        CHECK_FALSE(all.metadata->remaining_item_count);

        auto page = co_await cms.async_list(p);  // one page keeps its continue token
        CHECK(page.items.size() == 2);
        CHECK(page.metadata->continue_ == "p2");
        CHECK(page.metadata->remaining_item_count == 2);

        kube::list_params bad;
        bad.label_selector = "bad";
        auto [ec, l] = co_await cms.async_list(bad, asio::as_tuple(asio::use_awaitable));
        CHECK(ec == kube::client_errc::decode_error);
        try {
          co_await cms.async_list(bad);
        } catch (const kube::error& e) {
          const std::string m = e.diag().client_message();
          INFO(m);
          CHECK(m.find(".items[1].data.k") != std::string::npos);
          CHECK(m.find("n/wrong") != std::string::npos);
        }
      },
      &targets);
  REQUIRE(targets.size() >= 3);
  CHECK(targets[0] == "/api/v1/namespaces/demo/configmaps?limit=2");
  CHECK(targets[1] == "/api/v1/namespaces/demo/configmaps?limit=2&continue=p2");
}

TEST_CASE("a watch event that does not fit T names the watch, the event, the object and the field", "[typed][watch]") {
  with_server(
      [](const auto&) {
        const std::string events =
            R"({"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5"},"data":{"k":"v"}}})"
            "\n"
            R"({"type":"MODIFIED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"6"},"data":{"k":[1]}}})"
            "\n";
        return std::vector<std::string>{json_response(200, events)};
      },
      [](kube::client c) -> asio::awaitable<void> {
        kube::api<ConfigMap> cms(c, "demo");
        auto w = co_await cms.async_watch();
        auto first = co_await w.async_next();
        CHECK(first.type == kube::watch_event_type::added);
        CHECK(first.object.data->at("k") == "v");
        const auto [code, m] = co_await next_fails(w);
        INFO(m);
        CHECK(code == kube::client_errc::decode_error);
        CHECK(m.find("watch configmaps in namespace demo: MODIFIED \"a\"") != std::string::npos);
        CHECK(m.find(".data.k: expected a string") != std::string::npos);
      });
}

TEST_CASE("a watch event with a number too large for a double is a decode error naming the event", "[typed][watch]") {
  with_server(
      [](const auto&) {
        const std::string events =
            R"({"type":"MODIFIED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"6"},"data":{"k":1e999}}})"
            "\n";
        return std::vector<std::string>{json_response(200, events)};
      },
      [](kube::client c) -> asio::awaitable<void> {
        kube::api<ConfigMap> cms(c, "demo");
        auto w = co_await cms.async_watch();
        const auto [code, m] = co_await next_fails(w);
        INFO(m);
        CHECK(code == kube::client_errc::decode_error);
        CHECK(m.find("watch configmaps in namespace demo: MODIFIED") != std::string::npos);
        CHECK(m.find("exponent overflow") != std::string::npos);
        CHECK(m.find("internal error") == std::string::npos);  // what it said before
      });
}

TEST_CASE("async_next_shared hands over each event's object in a shared_ptr of its own", "[typed][watch]") {
  with_server(
      [](const auto&) {
        const std::string events =
            R"({"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5"},"data":{"k":"v"}}})"
            "\n"
            R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"6","annotations":{"k8s.io/initial-events-end":"true"}}}})"
            "\n"
            R"({"type":"MODIFIED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"7"},"data":{"k":[1]}}})"
            "\n"
            R"({"type":"DELETED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"8"},"data":{"k":"w"}}})"
            "\n";
        return std::vector<std::string>{json_response(200, events)};
      },
      [](kube::client c) -> asio::awaitable<void> {
        kube::api<ConfigMap> cms(c, "demo");
        auto w = co_await cms.async_watch();
        auto added = co_await w.async_next_shared();
        CHECK(added.type == kube::watch_event_type::added);
        REQUIRE(added.object);
        CHECK(added.object.use_count() == 1);  // nobody else holds the decoder's object
        CHECK(added.object->data->at("k") == "v");
        CHECK(added.resource_version == "5");
        auto bookmark = co_await w.async_next_shared();
        CHECK(bookmark.type == kube::watch_event_type::bookmark);
        REQUIRE(bookmark.object);  // a default T
        CHECK_FALSE(bookmark.object->metadata.name.has_value());
        CHECK(bookmark.resource_version == "6");
        CHECK(bookmark.initial_events_end);
        auto [ec, bad] = co_await w.async_next_shared(asio::as_tuple(asio::use_awaitable));
        CHECK(ec == kube::client_errc::decode_error);
        auto deleted = co_await w.async_next_shared();
        CHECK(deleted.type == kube::watch_event_type::deleted);
        REQUIRE(deleted.object);
        CHECK(deleted.object != added.object);
        CHECK(deleted.object->data->at("k") == "w");
        CHECK(added.object->data->at("k") == "v");  // the earlier event's object is its own
        CHECK(deleted.resource_version == "8");
      });
}

TEST_CASE("list_shared decodes each item into its own shared_ptr, with the list's metadata", "[typed][list]") {
  with_server(
      [](const http::request<http::string_body>& req) {
        const std::string t(req.target());
        std::string body;
        if (t.find("labelSelector=bad") != std::string::npos) {
          body =
              R"({"kind":"ConfigMapList","metadata":{},"items":[{"metadata":{"name":"ok","namespace":"n"}},{"metadata":{"name":"wrong","namespace":"n"},"data":{"k":false}}]})";
        } else if (t.find("labelSelector=notarray") != std::string::npos) {
          body = R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"4"},"items":{"a":1}})";
        } else if (t.find("labelSelector=empty") != std::string::npos) {
          body = R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":null,"items":null})";
        } else {
          // Envelope members in any order, one unknown to this client, escapes in an item.
          body =
              R"({"items":[{"metadata":{"name":"a","labels":{"x":"y"}},"data":{"k":"v\u00e9"}},{"metadata":{"name":"b"}}],)"
              R"("kind":"ConfigMapList","apiVersion":"v1","future":{"x":[1,2]},)"
              R"("metadata":{"selfLink":"/x","resourceVersion":"7","continue":"p2","remainingItemCount":5}})";
        }
        return std::vector<std::string>{json_response(200, body)};
      },
      [](kube::client c) -> asio::awaitable<void> {
        kube::api<ConfigMap> cms(c, "demo");
        auto page = co_await cms.async_list_shared();
        REQUIRE(page.items.size() == 2);
        REQUIRE(page.items[0]);
        CHECK(page.items[0]->name() == "a");
        CHECK(page.items[0]->data->at("k") == "v\xc3\xa9");
        CHECK(page.items[1]->name() == "b");
        CHECK(page.resource_version == "7");
        CHECK(page.continue_token == "p2");
        CHECK(page.remaining_item_count == 5);
        // The same objects as the list_type path decodes.
        auto whole = co_await cms.async_list();
        REQUIRE(whole.items.size() == 2);
        CHECK(kube::to_json(whole.items[0]) == kube::to_json(*page.items[0]));
        CHECK(kube::to_json(whole.items[1]) == kube::to_json(*page.items[1]));

        kube::list_params empty;
        empty.label_selector = "empty";
        auto none = co_await cms.async_list_shared(empty);
        CHECK(none.items.empty());
        CHECK(none.resource_version.empty());
        CHECK_FALSE(none.remaining_item_count);

        kube::list_params bad;
        bad.label_selector = "bad";
        auto [ec, l] = co_await cms.async_list_shared(bad, asio::as_tuple(asio::use_awaitable));
        CHECK(ec == kube::client_errc::decode_error);
        CHECK(l.items.empty());  // no partial result
        try {
          co_await cms.async_list_shared(bad);
          FAIL("no exception");
        } catch (const kube::error& e) {
          const std::string m = e.diag().client_message();
          INFO(m);
          CHECK(m.find(".items[1].data.k") != std::string::npos);
          CHECK(m.find("n/wrong") != std::string::npos);
        }

        kube::list_params notarray;
        notarray.label_selector = "notarray";
        try {
          co_await cms.async_list_shared(notarray);
          FAIL("no exception");
        } catch (const kube::error& e) {
          const std::string m = e.diag().client_message();
          INFO(m);
          CHECK(e.code() == kube::client_errc::decode_error);
          CHECK(m.find(".items: expected an array") != std::string::npos);
        }
      });
}

TEST_CASE("delete completes with the object or with the Status, as the server answers", "[typed][delete]") {
  with_server(
      [](const http::request<http::string_body>& req) {
        const std::string t(req.target());
        if (t.find("/configmaps/obj") != std::string::npos)
          return std::vector<std::string>{json_response(
              200,
              R"({"kind":"ConfigMap","metadata":{"name":"obj","deletionTimestamp":"2024-05-01T10:00:00Z","finalizers":["x/y"]}})")};
        if (t.find("/configmaps/st") != std::string::npos)
          return std::vector<std::string>{json_response(
              200, R"({"kind":"Status","apiVersion":"v1","status":"Success","details":{"name":"st","uid":"u1"}})")};
        return std::vector<std::string>{
            json_response(200, R"({"kind":"ConfigMapList","metadata":{},"items":[{"metadata":{"name":"x"}}]})")};
      },
      [](kube::client c) -> asio::awaitable<void> {
        kube::api<ConfigMap> cms(c, "demo");
        auto a = co_await cms.async_delete("obj");
        REQUIRE(a.object);
        CHECK_FALSE(a.status);
        CHECK(a.object->metadata.deletion_timestamp);
        auto b = co_await cms.async_delete("st");
        REQUIRE(b.status);
        CHECK_FALSE(b.object);
        CHECK(b.status->status == "Success");
        CHECK(b.status->details_uid == "u1");
        auto all = co_await cms.async_delete_collection();
        REQUIRE(all.object);
        CHECK(all.object->items.size() == 1);
      });
}

namespace {
std::string chunked_log(const std::vector<std::string>& chunks) {
  std::string out = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const auto& c : chunks) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", c.size());
    out += size + c + "\r\n";
  }
  return out + "0\r\n\r\n";
}

// Opens the log of pod "p" on a server that writes `pieces` in writes of
// `split` bytes, and hands the stream to `body`.
template <class F>
void with_log(const std::vector<std::string>& pieces, std::size_t split, kube::log_params p, F body,
              std::string* target = nullptr) {
  std::string all;
  for (const auto& s : pieces) all += s;
  std::vector<std::string> writes;
  for (std::size_t i = 0; i < all.size(); i += split) writes.push_back(all.substr(i, split));
  std::vector<std::string> targets;
  with_server([&](const auto&) { return writes; },
              [&](kube::client c) -> asio::awaitable<void> {
                kube::api<Pod> pods(c, "demo");
                auto s = co_await kube::async_logs(pods, "p", p);
                co_await body(s);
              },
              &targets);
  if (target && !targets.empty()) *target = targets[0];
}

std::vector<std::string> read_lines(const std::vector<std::string>& pieces, std::size_t split, kube::log_params p,
                                    kube::error_code& end, std::string* target = nullptr) {
  std::vector<std::string> lines;
  with_log(
      pieces, split, p,
      [&](kube::log_stream& s) -> asio::awaitable<void> {
        for (;;) {
          auto [ec, line] = co_await s.async_read_line(asio::as_tuple(asio::use_awaitable));
          if (ec) {
            end = ec;
            break;
          }
          lines.push_back(std::move(line));
        }
      },
      target);
  return lines;
}
}  // namespace

TEST_CASE("log lines are split correctly whatever the chunk and read boundaries", "[typed][logs]") {
  const std::vector<std::string> chunks{"first line\nsec", "ond line\r\n", "\n", "third\nunterminated tail"};
  const std::vector<std::string> want{"first line", "second line\r", "", "third", "unterminated tail"};
  for (std::size_t split : {1u, 2u, 7u, 64u, 100000u}) {
    kube::error_code end;
    kube::log_params p;
    auto lines = read_lines({chunked_log(chunks)}, split, p, end);
    INFO("split " << split);
    CHECK(lines == want);
    CHECK(end == asio::error::eof);
  }
}

TEST_CASE("log parameters are sent and long lines come in max_line pieces", "[typed][logs]") {
  kube::log_params p;
  p.container = "app";
  p.follow = true;
  p.tail_lines = 10;
  p.since_seconds = 60;
  p.timestamps = true;
  p.max_line = 4;
  kube::error_code end;
  std::string target;
  auto lines = read_lines({chunked_log({"abcdefghij\nxy\n"})}, 3, p, end, &target);
  CHECK(lines == std::vector<std::string>{"abcd", "efgh", "ij", "xy"});
  CHECK(end == asio::error::eof);
  CHECK(target ==
        "/api/v1/namespaces/demo/pods/p/log?container=app&follow=true&timestamps=true&tailLines=10&sinceSeconds=60");
}

TEST_CASE("since_time is sent as sinceTime", "[typed][logs]") {
  kube::log_params p;
  p.since_time = "2024-05-01T10:00:00+02:00";
  kube::error_code end;
  std::string target;
  auto lines = read_lines({chunked_log({"x\n"})}, 64, p, end, &target);
  CHECK(lines == std::vector<std::string>{"x"});
  CHECK(target == "/api/v1/namespaces/demo/pods/p/log?sinceTime=2024-05-01T10%3A00%3A00%2B02%3A00");
}

TEST_CASE("since_seconds with since_time is refused before any request", "[typed][logs]") {
  offline o;
  kube::api<Pod> pods(o.c, "demo");
  kube::log_params p;
  p.since_seconds = 10;
  p.since_time = "2024-05-01T10:00:00Z";
  kube::error_code got;
  kube::diagnostics diag;
  kube::async_logs(pods, "p", p,
                   kube::with_diagnostics(diag, [&](kube::error_code ec, kube::log_stream) { got = ec; }));
  o.io.run_for(std::chrono::seconds(10));
  CHECK(got == kube::client_errc::invalid_config);
  CHECK_THAT(diag.client_message(), Catch::Contains("at most one of since_seconds and since_time"));
}

TEST_CASE("async_read_some makes a log an AsyncReadStream: async_read and async_read_until see every byte",
          "[typed][logs]") {
  const std::vector<std::string> chunks{"first line\nsec", "ond line\r\n", "\n", "third\nunterminated tail"};
  std::string want;
  for (const auto& c : chunks) want += c;
  for (std::size_t split : {1u, 2u, 7u, 64u, 100000u}) {
    INFO("split " << split);
    std::string got;
    kube::error_code end;
    with_log({chunked_log(chunks)}, split, {}, [&](kube::log_stream& s) -> asio::awaitable<void> {
      auto [ec, n] = co_await asio::async_read(s, asio::dynamic_buffer(got), asio::as_tuple(asio::use_awaitable));
      (void)n;
      end = ec;
    });
    CHECK(got == want);
    CHECK(end == asio::error::eof);

    std::vector<std::string> lines;
    with_log({chunked_log(chunks)}, split, {}, [&](kube::log_stream& s) -> asio::awaitable<void> {
      std::string buf;
      for (;;) {
        auto [ec, n] =
            co_await asio::async_read_until(s, asio::dynamic_buffer(buf), '\n', asio::as_tuple(asio::use_awaitable));
        if (ec) {
          end = ec;
          break;
        }
        lines.push_back(buf.substr(0, n - 1));
        buf.erase(0, n);
      }
      lines.push_back(buf);  // what follows the last '\n'
    });
    CHECK(lines == std::vector<std::string>{"first line", "second line\r", "", "third", "unterminated tail"});
    CHECK(end == asio::error::eof);
  }
}

TEST_CASE("lines and raw reads take from one buffer, in order, each byte once", "[typed][logs]") {
  for (std::size_t split : {1u, 3u, 100000u}) {
    INFO("split " << split);
    std::vector<std::string> got;
    kube::error_code line_end, some_end;
    with_log({chunked_log({"first line\nsecond\nthird"})}, split, {},
             [&](kube::log_stream& s) -> asio::awaitable<void> {
               auto exactly = [&](std::size_t n) -> asio::awaitable<std::string> {
                 std::string b(n, '\0');
                 co_await asio::async_read(s, asio::buffer(b), asio::use_awaitable);
                 co_return b;
               };
               got.push_back(co_await exactly(3));
               got.push_back(co_await s.async_read_line());  // the rest of the line
               got.push_back(co_await exactly(4));
               got.push_back(co_await s.async_read_line());
               got.push_back(co_await s.async_read_line());  // a tail without '\n'
               auto [lec, line] = co_await s.async_read_line(asio::as_tuple(asio::use_awaitable));
               line_end = lec;
               char b[4];
               auto [sec, n] = co_await s.async_read_some(asio::buffer(b), asio::as_tuple(asio::use_awaitable));
               some_end = sec;
               CHECK(line.empty());
               CHECK(n == 0);
             });
    CHECK(got == std::vector<std::string>{"fir", "st line", "seco", "nd", "third"});
    CHECK(line_end == asio::error::eof);
    CHECK(some_end == asio::error::eof);
  }
}

TEST_CASE("a log stream cut before its end gives the bytes received, then the error", "[typed][logs]") {
  // The chunk announces 0x20 bytes; the connection closes after 12.
  const std::string cut = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "20\r\nwhole line\npart";
  std::string got;
  kube::error_code end;
  with_log({cut}, 5, {}, [&](kube::log_stream& s) -> asio::awaitable<void> {
    auto [ec, n] = co_await asio::async_read(s, asio::dynamic_buffer(got), asio::as_tuple(asio::use_awaitable));
    (void)n;
    end = ec;
  });
  CHECK(got == "whole line\npart");
  CHECK(end);
  CHECK(end != asio::error::eof);
}

TEST_CASE("a refused log request reports the server's Status", "[typed][logs]") {
  with_server(
      [](const auto&) {
        return std::vector<std::string>{json_response(
            400,
            R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"pod p does not have a host assigned","reason":"BadRequest","code":400})")};
      },
      [](kube::client c) -> asio::awaitable<void> {
        kube::api<Pod> pods(c, "demo");
        auto [ec, s] = co_await kube::async_logs(pods, "p", asio::as_tuple(asio::use_awaitable));
        CHECK(ec == kube::api_errc::bad_request);
        CHECK_FALSE(s.is_open());
      });
}

TEST_CASE("typed operations work with deferred, callbacks and futures", "[typed][tokens]") {
  asio::io_context io;
  scripted_server server(io.get_executor(), [](const auto&) {
    return std::vector<std::string>{
        json_response(200, R"({"kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}})")};
  });
  auto c = kube_test::client_of(io.get_executor(), server.server);
  kube::api<ConfigMap> cms(c, "demo");
  int done = 0;
  cms.async_get("a", [&](kube::error_code ec, ConfigMap cm) {
    CHECK_FALSE(ec);
    CHECK(cm.data->at("k") == "v");
    ++done;
  });
  auto op = cms.async_get("a", asio::deferred);
  std::move(op)([&](kube::error_code ec, ConfigMap cm) {
    CHECK_FALSE(ec);
    CHECK(cm.name() == "a");
    ++done;
  });
  auto fut = cms.async_get("a", asio::use_future);
  while (done < 2 || fut.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    if (io.run_one_for(std::chrono::seconds(10)) == 0) break;
  }
  CHECK(done == 2);
  CHECK(fut.get().name() == "a");
}

TEST_CASE("with_diagnostics keeps the server's Status with callbacks, as_tuple, deferred and futures",
          "[typed][tokens][diagnostics]") {
  asio::io_context io;
  scripted_server server(io.get_executor(), [](const auto&) {
    return std::vector<std::string>{json_response(
        404,
        R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"configmaps \"a\" not found","reason":"NotFound","code":404})")};
  });
  auto c = kube_test::client_of(io.get_executor(), server.server);
  kube::api<ConfigMap> cms(c, "demo");
  kube::diagnostics by_callback, by_deferred, by_tuple, by_future;
  std::vector<kube::error_code> codes;
  cms.async_get("a", kube::with_diagnostics(by_callback, [&](kube::error_code ec, ConfigMap) { codes.push_back(ec); }));
  auto op = cms.async_get("a", kube::with_diagnostics(by_deferred, asio::deferred));
  std::move(op)([&](kube::error_code ec, ConfigMap) { codes.push_back(ec); });
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto [ec, cm] =
            co_await cms.async_get("a", kube::with_diagnostics(by_tuple, asio::as_tuple(asio::use_awaitable)));
        codes.push_back(ec);
      },
      asio::detached);
  auto fut = cms.async_get("a", kube::with_diagnostics(by_future, asio::use_future));
  while (codes.size() < 3 || fut.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    if (io.run_one_for(std::chrono::seconds(10)) == 0) break;
  }
  REQUIRE(codes.size() == 3);
  for (auto ec : codes) CHECK(ec == kube::api_errc::not_found);
  CHECK_THROWS(fut.get());
  for (const auto* d : {&by_callback, &by_deferred, &by_tuple, &by_future}) {
    CHECK(d->server_message() == "configmaps \"a\" not found");
    CHECK(d->client_message().find("configmaps") != std::string::npos);
  }
}

namespace {
// What a controller's write memory hears: "group/resource ns/name@rv".
struct recording_observer final : kube::write_observer {
  std::vector<std::string> seen;
  void on_written(const kube::written_object& w) noexcept override {
    seen.push_back(std::string(w.group) + "/" + std::string(w.resource) + " " + std::string(w.namespace_) + "/" +
                   std::string(w.name) + "@" + std::string(w.resource_version));
  }
};
}  // namespace

TEST_CASE("write observers hear each stored write with its resourceVersion, nothing else", "[typed][write_observer]") {
  auto obs = std::make_shared<recording_observer>();
  auto gone = std::make_shared<recording_observer>();
  with_server(
      [](const http::request<http::string_body>& req) {
        const std::string t(req.target());
        const auto cm = [](const char* rv) {
          return json_response(200, std::string(R"({"kind":"ConfigMap","metadata":{"name":"a","namespace":"demo",)") +
                                        R"("resourceVersion":")" + rv + R"("}})");
        };
        if (t.find("dryRun") != std::string::npos) return std::vector<std::string>{cm("99")};
        if (req.method() == http::verb::post && t.find("/configmaps") != std::string::npos &&
            req.body().find("\"b\"") != std::string::npos)
          return std::vector<std::string>{json_response(
              409, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"AlreadyExists","code":409})")};
        if (req.method() == http::verb::post) return std::vector<std::string>{cm("41")};
        if (req.method() == http::verb::put) return std::vector<std::string>{cm("42")};
        if (req.method() == http::verb::patch) return std::vector<std::string>{cm("43")};
        return std::vector<std::string>{cm("40")};  // get
      },
      [&](kube::client c) -> asio::awaitable<void> {
        kube::add_write_observer(c, obs);
        kube::add_write_observer(c, gone);
        gone.reset();  // held weakly: a gone observer is dropped
        kube::api<ConfigMap> cms(c, "demo");
        ConfigMap a;
        a.metadata.name = "a";
        co_await cms.async_get("a");
        co_await cms.async_create(a);
        co_await cms.async_replace(a);
        co_await cms.async_patch("a", kube::patch_type::merge, R"({"data":{"k":"v"}})");
        kube::write_params dry;
        dry.dry_run = true;
        co_await cms.async_create(a, dry);  // stores nothing
        ConfigMap b;
        b.metadata.name = "b";
        const kube::write_params plain;  // named: g++ 12 and class temporaries inside co_await (client.md)
        auto [ec, ignored] = co_await cms.async_create(b, plain, asio::as_tuple(asio::use_awaitable));
        CHECK(ec == kube::api_errc::already_exists);
      });
  CHECK(obs->seen ==
        std::vector<std::string>{"/configmaps demo/a@41", "/configmaps demo/a@42", "/configmaps demo/a@43"});
}
