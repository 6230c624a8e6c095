// Reflector rules (client-go reflector.go), one test per rule, driven by a
// scripted fake lister_watcher and a manual clock.
// Size: about 660 lines, one short case per rule on one rig.
#include "rig.hpp"

#include <boost/json/parse.hpp>

using namespace kube::informer;
using namespace kube::informer::test;
using kube::api_errc;
using kube::client_errc;
using kube::error_code;

namespace {
std::vector<delta_type> types(const delta_list<thing>& dl) {
  std::vector<delta_type> out;
  for (const auto& d : dl.deltas) {
    out.push_back(d.type);
  }
  return out;
}
std::shared_ptr<const thing> obj(const std::string& name, const std::string& rv) { return make("ns", name, rv); }
}  // namespace

TEST_CASE("reflector: the first list is at resourceVersion 0, then a watch from the list's version",
          "[informer][reflector]") {
  reflector_rig t;
  REQUIRE(t.lw->list_calls().size() == 1);
  CHECK(t.lw->list_calls()[0].resource_version == "0");
  CHECK(t.lw->list_calls()[0].limit == 500);
  CHECK(t.lw->watch_calls().empty());

  t.lw->push_list({obj("a", "5"), obj("b", "6")}, "10");
  t.poll();
  REQUIRE(t.lw->watch_calls().size() == 1);
  const auto& w = t.lw->watch_calls()[0];
  CHECK(w.resource_version == "10");
  CHECK(w.allow_bookmarks);
  CHECK(w.timeout_seconds == 450);  // 300 + 0.5 * (600 - 300)
  CHECK_FALSE(w.send_initial_events);
  CHECK(t.r->last_sync_resource_version() == "10");

  auto popped = t.drain();
  REQUIRE(popped.size() == 2);
  for (auto& dl : popped) {
    CHECK(types(dl) == std::vector{delta_type::replaced});
    CHECK(dl.is_in_initial_list);
  }
  CHECK(t.fifo.has_synced());
  CHECK(t.errors.empty());
}

TEST_CASE("reflector: watch timeoutSeconds is random between 300 and 600", "[informer][reflector]") {
  for (double r : {0.0, 0.999999}) {
    reflector_rig t([r](reflector_params<thing>& o) { o.random = [r] { return r; }; });
    t.lw->push_list({}, "1");
    t.poll();
    REQUIRE(t.lw->watch_calls().size() == 1);
    CHECK(t.lw->watch_calls()[0].timeout_seconds == (r == 0.0 ? 300 : 599));
  }
  reflector_rig t([](reflector_params<thing>& o) { o.random = {}; });  // the real generator
  t.lw->push_list({}, "1");
  t.poll();
  for (int i = 0; i < 20; ++i) {
    t.lw->push_watch({fake::bookmark(std::to_string(i + 2))}, fake::stream_end::eof);
    t.poll();
  }
  REQUIRE(t.lw->watch_calls().size() == 21);
  for (const auto& w : t.lw->watch_calls()) {
    REQUIRE(w.timeout_seconds);
    CHECK(*w.timeout_seconds >= 300);
    CHECK(*w.timeout_seconds <= 600);
  }
}

TEST_CASE("reflector: a watch that ends normally is reopened from the last resourceVersion, no relist",
          "[informer][reflector]") {
  reflector_rig t;
  t.lw->push_list({obj("a", "5")}, "10");
  t.lw->push_watch({fake::added(obj("c", "11")), fake::modified(obj("a", "12"))}, fake::stream_end::eof);
  t.poll();
  REQUIRE(t.lw->watch_calls().size() == 2);
  CHECK(t.lw->watch_calls()[1].resource_version == "12");
  t.lw->push_watch({fake::bookmark("20")}, fake::stream_end::eof);
  t.poll();
  REQUIRE(t.lw->watch_calls().size() == 3);
  CHECK(t.lw->watch_calls()[2].resource_version == "20");  // bookmarks move the version
  CHECK(t.lw->list_calls().size() == 1);
  CHECK(t.errors.empty());
  CHECK(t.clk->sleeps().empty());  // no backoff between normal watch restarts
  auto popped = t.drain();
  REQUIRE(popped.size() == 2);
  CHECK(types(popped[0]) == std::vector{delta_type::replaced, delta_type::updated});
  CHECK(types(popped[1]) == std::vector{delta_type::added});
}

TEST_CASE("reflector: a dropped connection restarts the watch without a relist", "[informer][reflector]") {
  reflector_rig t;
  t.lw->push_list({}, "10");
  t.lw->push_watch({fake::added(obj("a", "11")), fake::error(boost::asio::error::connection_reset, "reset")});
  t.poll();
  REQUIRE(t.lw->watch_calls().size() == 2);
  CHECK(t.lw->watch_calls()[1].resource_version == "11");
  CHECK(t.lw->list_calls().size() == 1);
  // The hook hears of it: reopened at once, no relist.
  REQUIRE(t.errors.size() == 1);
  CHECK(t.errors[0].first == boost::asio::error::connection_reset);
  CHECK(t.retries[0] == std::pair{0ms, false});
}

TEST_CASE("reflector: 410 relists at the last synced version after a backoff - unavailable -> paginated list at the "
          "empty version",
          "[informer][reflector]") {
  reflector_rig t;
  t.lw->push_list({obj("a", "5"), obj("b", "6")}, "10");
  t.lw->push_watch({fake::modified(obj("a", "12")), fake::error(api_errc::expired, "too old resource version")});
  t.poll();
  t.drain();
  REQUIRE(t.errors.size() == 1);
  CHECK(t.errors[0].first == api_errc::expired);
  CHECK(t.retries[0] == std::pair{1500ms, true});  // the hook is told the wait and the relist
  REQUIRE(t.clk->pending() == 1);
  // After a 410: in [0, max(d, relist_spread)) = [0, 3 s), at random 0.5.
  CHECK(t.clk->next_wake_in() == 1500ms);
  CHECK(t.lw->list_calls().size() == 1);

  t.clk->advance(1500ms);
  t.poll();
  REQUIRE(t.lw->list_calls().size() == 2);
  CHECK(t.lw->list_calls()[1].resource_version == "12");  // the last synced version
  CHECK_FALSE(t.lw->list_calls()[1].limit);               // a specific version is not paginated

  t.lw->push_list_error(api_errc::expired, "too old");
  t.poll();
  // The list's own 410 reaches the hook, and the list at "" waits the spread delay.
  REQUIRE(t.errors.size() == 2);
  CHECK(t.errors[1].first == api_errc::expired);
  CHECK(t.retries[1].second);
  CHECK(t.lw->list_calls().size() == 2);
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  REQUIRE(t.lw->list_calls().size() == 3);
  CHECK(t.lw->list_calls()[2].resource_version.empty());  // consistent read
  CHECK(t.lw->list_calls()[2].limit == 500);
  t.lw->push_list({obj("a", "30")}, "31", "tok");
  t.poll();
  REQUIRE(t.lw->list_calls().size() == 4);
  CHECK(t.lw->list_calls()[3].continue_token == "tok");
  CHECK(t.lw->list_calls()[3].resource_version.empty());
  t.lw->push_list({obj("c", "32")}, "31");
  t.poll();
  CHECK(t.r->last_sync_resource_version() == "31");
  REQUIRE(t.lw->watch_calls().size() == 2);
  CHECK(t.lw->watch_calls()[1].resource_version == "31");

  // b vanished while we were not watching: a tombstone with its last state.
  auto popped = t.drain();
  REQUIRE(popped.size() == 3);
  const delta_list<thing>* b = nullptr;
  for (auto& dl : popped) {
    if (dl.key == "ns/b") {
      b = &dl;
    }
  }
  REQUIRE(b);
  REQUIRE(b->deltas.size() == 1);
  CHECK(b->deltas[0].type == delta_type::deleted);
  REQUIRE(b->deltas[0].tombstone());
  CHECK(b->deltas[0].tombstone()->obj->rv == "6");
  CHECK(t.cached_keys() == std::vector<std::string>{"ns/a", "ns/c"});
  CHECK(t.r->stats().lists == 2);
}

TEST_CASE("reflector: a too large resourceVersion also falls back to a list at the empty version",
          "[informer][reflector]") {
  reflector_rig t;
  t.lw->push_list({}, "10");
  t.lw->push_watch({fake::error(api_errc::internal_error, "boom")});
  t.poll();
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  REQUIRE(t.lw->list_calls().size() == 2);
  CHECK(t.lw->list_calls()[1].resource_version == "10");
  kube::diagnostics d;
  d.set_server_status(boost::json::parse(R"({"kind":"Status","code":504,"reason":"Timeout",
      "details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}]}})")
                          .as_object());
  t.lw->push_list_error(api_errc::timeout, d);
  t.poll();
  CHECK(t.errors.back().first == api_errc::timeout);  // told, then the backoff
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  REQUIRE(t.lw->list_calls().size() == 3);
  CHECK(t.lw->list_calls()[2].resource_version.empty());
  // Other list errors do not switch to "" and go to the hook.
  t.lw->push_list_error(api_errc::internal_error, "boom");
  t.poll();
  CHECK(t.lw->list_calls().size() == 3);
  CHECK(t.errors.back().first == api_errc::internal_error);
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  REQUIRE(t.lw->list_calls().size() == 4);
  CHECK(t.lw->list_calls()[3].resource_version.empty());  // still unavailable until a list succeeds
  t.lw->push_list({}, "40");
  t.poll();
  CHECK_FALSE(t.r->last_sync_resource_version_unavailable());
}

TEST_CASE("reflector: an expired continue token falls back to one full list, after the hook and a wait",
          "[informer][reflector]") {
  reflector_rig t;
  t.lw->push_list({obj("a", "1")}, "10", "t1");
  t.lw->push_list_error(api_errc::expired, "continue expired");
  t.lw->push_list({obj("a", "1"), obj("b", "2")}, "12");
  t.poll();
  REQUIRE(t.errors.size() == 1);
  CHECK(t.errors[0].first == api_errc::expired);
  CHECK(t.lw->list_calls().size() == 2);
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  REQUIRE(t.lw->list_calls().size() == 3);
  CHECK(t.lw->list_calls()[1].continue_token == "t1");
  CHECK(t.lw->list_calls()[2].continue_token.empty());
  CHECK_FALSE(t.lw->list_calls()[2].limit);
  CHECK(t.r->last_sync_resource_version() == "12");
  CHECK(t.drain().size() == 2);
  CHECK(t.errors.size() == 1);
}

TEST_CASE("reflector: backoff 800 ms doubling to 30 s with jitter, reset after 2 minutes of health",
          "[informer][reflector]") {
  reflector_rig t;
  for (int i = 0; i < 8; ++i) {
    t.lw->push_list_error(api_errc::internal_error, "down");
    t.poll();
    REQUIRE(t.clk->pending() == 1);
    t.clk->advance(t.clk->next_wake_in());
    t.poll();
  }
  using ms = std::chrono::milliseconds;
  std::vector<ms> got;
  for (auto d : t.clk->sleeps()) {
    got.push_back(std::chrono::duration_cast<ms>(d));
  }
  // base 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30 s, each * 1.5 (jitter 1.0, random 0.5)
  CHECK(got == std::vector<ms>{1200ms, 2400ms, 4800ms, 9600ms, 19200ms, 38400ms, 45000ms, 45000ms});
  CHECK(t.errors.size() == 8);

  // Healthy: a list and a watch that stays open for 3 minutes.
  t.lw->push_list({}, "10");
  t.poll();
  t.lw->push_watch(std::vector<event<thing>>{});
  t.poll();
  t.clk->advance(std::chrono::minutes(3));
  t.lw->stream(0)->push(fake::error(api_errc::internal_error, "blip"));
  t.poll();
  REQUIRE(t.clk->pending() == 1);
  CHECK(t.clk->next_wake_in() == 1200ms);  // back to the start
}

TEST_CASE("reflector: an unreachable server is tried every 2-4 s, and the relist its 410 asks for waits under 3 s",
          "[informer][reflector]") {
  using ms = std::chrono::milliseconds;
  reflector_rig t;
  t.lw->push_list({}, "10");
  t.poll();
  // Unreachable: the watch is retried on the reconnect backoff, which stops
  // growing at 2 s; the backoff of answered failures does not grow.
  auto outage = [&](int attempts) {
    for (int i = 0; i < attempts; ++i) {
      t.lw->push_watch_error(i % 2 ? boost::asio::error::connection_reset : boost::asio::error::connection_refused,
                             "down");
      t.poll();
      REQUIRE(t.clk->pending() == 1);
      t.clk->advance(t.clk->next_wake_in());
    }
  };
  outage(30);  // a 90 s outage
  // 250, 500, 1000, 2000 ms, then 2000 ms, each * 1.5 (jitter 1.0, random 0.5)
  REQUIRE(t.retries.size() == 30);
  CHECK(std::vector(t.retries.begin(), t.retries.begin() + 5) ==
        std::vector<std::pair<ms, bool>>{
            {375ms, false}, {750ms, false}, {1500ms, false}, {3000ms, false}, {3000ms, false}});
  CHECK(t.retries.back() == std::pair{3000ms, false});  // before: 45 s (the 30 s cap, * 1.5)
  // Back, with a fresh watch cache: 410 for the old version. The relist
  // waits within [0, relist_spread = 3 s): 1.5 s at random 0.5.
  t.lw->push_watch_error(api_errc::expired, "too old resource version");
  t.poll();
  CHECK(t.retries.back() == std::pair{1500ms, true});  // before: 15 s ([0, 30 s) from the grown backoff)
  t.clk->advance(1500ms);
  t.lw->push_list({}, "20");
  t.poll();
  REQUIRE(t.lw->list_calls().size() == 2);
  // The next outage starts again at 250 ms: the answer reset the reconnect backoff.
  t.lw->push_watch(std::vector<event<thing>>{});
  t.poll();
  t.clk->advance(std::chrono::seconds(5));
  t.lw->stream(0)->push(fake::error(boost::asio::error::connection_reset, "killed"));
  t.poll();
  outage(1);
  CHECK(t.retries.back() == std::pair{375ms, false});
  // An answered failure takes the backoff, which the outages did not grow
  // (it stepped once, for the 410's spread).
  t.lw->push_watch_error(api_errc::too_many_requests, "slow down");
  t.poll();
  CHECK(t.retries.back() == std::pair{2400ms, false});
}

TEST_CASE("reflector: a DNS failure, a TLS failure or a timeout takes the backoff, not the reconnect cadence",
          "[informer][reflector]") {
  for (const kube::error_code ec :
       {kube::error_code(boost::asio::error::host_not_found), kube::error_code(kube::client_errc::tls_error),
        kube::error_code(kube::client_errc::timeout)}) {
    INFO(ec.message());
    reflector_rig t;
    t.lw->push_list({}, "10");
    t.lw->push_watch_error(ec, "no");
    t.poll();
    REQUIRE(t.clk->pending() == 1);
    CHECK(t.clk->next_wake_in() == 1200ms);  // 800 ms * 1.5, not 250 ms * 1.5
  }
}

TEST_CASE("reflector: jitter stays between d and 2d with the real random generator", "[informer][reflector]") {
  reflector_rig t([](reflector_params<thing>& o) { o.random = {}; });
  kube::clock::duration base = 800ms;
  for (int i = 0; i < 6; ++i) {
    t.lw->push_list_error(api_errc::internal_error, "down");
    t.poll();
    const auto d = t.clk->sleeps().back();
    CHECK(d >= base);
    CHECK(d < 2 * base);
    base = std::min<kube::clock::duration>(base * 2, 30s);
    t.clk->advance(t.clk->next_wake_in());
    t.poll();
  }
}

TEST_CASE("reflector: a refused watch (connection refused, 429) is retried after backoff without relisting",
          "[informer][reflector]") {
  reflector_rig t;
  t.lw->push_list({}, "10");
  t.lw->push_watch_error(boost::asio::error::connection_refused, "refused");
  t.poll();
  REQUIRE(t.clk->pending() == 1);
  CHECK(t.clk->next_wake_in() == 375ms);  // reconnect_backoff: 250 ms * 1.5
  t.clk->advance(375ms);
  t.lw->push_watch_error(api_errc::too_many_requests, "slow down");
  t.poll();
  REQUIRE(t.clk->pending() == 1);
  CHECK(t.clk->next_wake_in() == 1200ms);  // backoff: 800 ms * 1.5
  t.clk->advance(1200ms);
  t.poll();
  REQUIRE(t.lw->watch_calls().size() == 3);
  CHECK(t.lw->watch_calls()[2].resource_version == "10");
  CHECK(t.lw->list_calls().size() == 1);
  // Every failed attempt reached the hook, with the backoff it waited.
  REQUIRE(t.errors.size() == 2);
  CHECK(t.errors[0].first == boost::asio::error::connection_refused);
  CHECK(t.errors[1].first == api_errc::too_many_requests);
  CHECK(t.retries == std::vector<std::pair<std::chrono::milliseconds, bool>>{{375ms, false}, {1200ms, false}});
}

TEST_CASE("reflector: malformed events and wrong-kind objects go to the hook and cause a relist - the cache keeps its "
          "objects",
          "[informer][reflector]") {
  for (auto bad : {error_code(client_errc::watch_stream_error), error_code(client_errc::decode_error)}) {
    reflector_rig t;
    t.lw->push_list({obj("a", "5"), obj("b", "6")}, "10");
    t.lw->push_watch({fake::modified(obj("a", "11")), fake::error(bad, "bad event at byte 42")});
    t.poll();
    t.drain();
    REQUIRE(t.errors.size() == 1);
    CHECK(t.errors[0].first == bad);
    CHECK(t.errors[0].second.find("byte 42") != std::string::npos);
    CHECK(t.cached_keys() == std::vector<std::string>{"ns/a", "ns/b"});  // nothing lost
    t.clk->advance(t.clk->next_wake_in());
    t.poll();
    REQUIRE(t.lw->list_calls().size() == 2);
    CHECK(t.lw->list_calls()[1].resource_version == "11");
    t.lw->push_list({obj("a", "11"), obj("b", "6")}, "11");
    t.poll();
    t.drain();
    CHECK(t.cached_keys() == std::vector<std::string>{"ns/a", "ns/b"});
    CHECK(t.lw->watch_calls().size() == 2);
  }
}

TEST_CASE("reflector: an event without an object, or one the key function rejects, is a decode error",
          "[informer][reflector]") {
  reflector_rig t;
  t.lw->push_list({}, "10");
  auto e = fake::added(nullptr);
  e.resource_version = "11";
  t.lw->push_watch({e});
  t.poll();
  REQUIRE(t.errors.size() == 1);
  CHECK(t.errors[0].first == client_errc::decode_error);
  CHECK(t.fifo.empty());
}

TEST_CASE("reflector: a very short watch without events counts as an error", "[informer][reflector]") {
  reflector_rig t;
  t.lw->push_list({}, "10");
  t.lw->push_watch({}, fake::stream_end::eof);
  t.poll();
  REQUIRE(t.errors.size() == 1);
  CHECK(t.errors[0].second.find("very short watch") != std::string::npos);
  // The same empty close after >= 1 s is a normal end.
  t.clk->advance(t.clk->next_wake_in());
  t.lw->push_list({}, "10");
  t.lw->push_watch(std::vector<event<thing>>{});
  t.poll();
  t.clk->advance(5s);
  t.lw->stream(1)->finish();
  t.poll();
  CHECK(t.errors.size() == 1);
  CHECK(t.lw->watch_calls().size() == 3);
}

TEST_CASE("reflector: added events of a watch from version 0 do not move the version until another event",
          "[informer][reflector]") {
  reflector_rig t;
  t.lw->push_list({}, "");  // a server that gave no version: watch from ""
  t.lw->push_watch({fake::added(obj("a", "7")), fake::added(obj("b", "8"))}, fake::stream_end::eof);
  t.poll();
  REQUIRE(t.lw->watch_calls().size() == 2);
  CHECK(t.lw->watch_calls()[0].resource_version.empty());
  CHECK(t.lw->watch_calls()[1].resource_version.empty());
  t.lw->push_watch({fake::added(obj("c", "9")), fake::modified(obj("a", "10"))}, fake::stream_end::eof);
  t.poll();
  REQUIRE(t.lw->watch_calls().size() == 3);
  CHECK(t.lw->watch_calls()[2].resource_version == "10");
}

TEST_CASE("reflector: streaming list syncs at the initial-events-end bookmark and keeps watching on that stream",
          "[informer][reflector]") {
  reflector_rig t([](reflector_params<thing>& o) { o.streaming_list = true; });
  REQUIRE(t.lw->watch_calls().size() == 1);
  const auto& w = t.lw->watch_calls()[0];
  CHECK(w.send_initial_events);
  CHECK(w.resource_version_match == "NotOlderThan");
  CHECK(w.resource_version.empty());
  CHECK(w.allow_bookmarks);
  CHECK(t.lw->list_calls().empty());

  t.lw->push_watch({fake::added(obj("a", "5")), fake::added(obj("b", "6")), fake::deleted(obj("b", "7")),
                    fake::bookmark("7"), fake::bookmark("8", true)});
  t.poll();
  CHECK(t.r->stats().streaming_syncs == 1);
  CHECK(t.r->last_sync_resource_version() == "8");
  CHECK(t.fifo.list_keys() == std::vector<std::string>{"ns/a"});
  t.lw->stream(0)->push(fake::modified(obj("a", "9")));
  t.poll();
  auto popped = t.drain();
  REQUIRE(popped.size() == 1);
  CHECK(types(popped[0]) == std::vector{delta_type::replaced, delta_type::updated});
  CHECK(popped[0].is_in_initial_list);
  CHECK(t.lw->watch_calls().size() == 1);
  CHECK(t.lw->list_calls().empty());
  CHECK(t.fifo.has_synced());
}

TEST_CASE("reflector: a refused streaming list falls back to list, and streaming stays off", "[informer][reflector]") {
  reflector_rig t([](reflector_params<thing>& o) { o.streaming_list = true; });
  t.lw->push_watch_error(api_errc::invalid, "sendInitialEvents is forbidden");
  t.poll();
  REQUIRE(t.lw->list_calls().size() == 1);
  CHECK(t.lw->list_calls()[0].resource_version == "0");
  CHECK(t.r->stats().streaming_fallbacks == 1);
  CHECK_FALSE(t.r->streaming_enabled());
  t.lw->push_list({obj("a", "1")}, "10");
  t.lw->push_watch({fake::error(api_errc::expired, "too old")});
  t.poll();
  REQUIRE(t.lw->watch_calls().size() == 2);
  CHECK_FALSE(t.lw->watch_calls()[1].send_initial_events);
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  CHECK(t.lw->list_calls().size() == 2);  // relist, no new streaming attempt
  CHECK(t.lw->watch_calls().size() == 2);
}

TEST_CASE("reflector: a streaming list from an expired version restarts at the empty version",
          "[informer][reflector]") {
  reflector_rig t([](reflector_params<thing>& o) { o.streaming_list = true; });
  t.lw->push_watch({fake::bookmark("5", true)});
  t.poll();
  t.lw->stream(0)->push(fake::error(api_errc::internal_error, "x"));
  t.poll();
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  REQUIRE(t.lw->watch_calls().size() == 2);
  CHECK(t.lw->watch_calls()[1].resource_version == "5");
  t.lw->push_watch({fake::error(api_errc::expired, "too old")});
  t.poll();
  CHECK(t.errors.back().first == api_errc::expired);  // told, then the spread wait
  CHECK(t.lw->watch_calls().size() == 2);
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  REQUIRE(t.lw->watch_calls().size() == 3);
  CHECK(t.lw->watch_calls()[2].resource_version.empty());
  CHECK(t.lw->watch_calls()[2].send_initial_events);
}

TEST_CASE("reflector: every failed streaming list reaches the hook, and a server that keeps answering 410 is retried "
          "after a growing wait, never at once",
          "[informer][reflector]") {
  reflector_rig t([](reflector_params<thing>& o) { o.streaming_list = true; });
  // A stream that ends before its initial-events-end bookmark: told to the
  // hook, and the list follows.
  t.lw->push_watch({}, fake::stream_end::eof);
  t.poll();
  REQUIRE(t.errors.size() == 1);
  CHECK(t.errors[0].first == client_errc::watch_stream_error);
  CHECK(t.retries[0] == std::pair{std::chrono::milliseconds(0), true});
  REQUIRE(t.lw->list_calls().size() == 1);
  t.lw->push_list({}, "10");
  t.lw->push_watch({fake::error(api_errc::internal_error, "x")});
  t.poll();
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  // Now 410 after 410, on open and as an ERROR event: each one is told, each
  // retry waits, and nothing is opened while the clock stands still.
  for (int i = 0; i < 6; ++i) {
    const auto errors = t.errors.size();
    if (i % 2 == 0) {
      t.lw->push_watch_error(api_errc::expired, "too old");
    } else {
      t.lw->push_watch({fake::error(api_errc::expired, "too old")});
    }
    t.poll();
    CHECK(t.errors.size() == errors + 1);
    CHECK(t.errors.back().first == api_errc::expired);
    const auto watches = t.lw->watch_calls().size();
    t.poll();
    CHECK(t.lw->watch_calls().size() == watches);  // no new attempt while the clock stands still
    REQUIRE(t.clk->pending() == 1);
    t.clk->advance(t.clk->next_wake_in());
    t.poll();
    CHECK(t.lw->watch_calls().size() == watches + 1);
  }
}

TEST_CASE("reflector: a relisted object with the held resourceVersion is the held object", "[informer][reflector]") {
  reflector_rig t;
  t.lw->push_list({obj("a", "5"), obj("b", "6")}, "10");
  t.poll();
  t.drain();
  const auto cached_a = t.cache.get_by_key("ns/a");
  REQUIRE(cached_a);
  CHECK(t.r->stats().reused == 0);  // the first list found nothing held
  // c arrives by the watch and is still queued (not in the cache) when the
  // watch fails and the relist comes.
  const auto watched_c = obj("c", "7");
  t.lw->push_watch({fake::added(watched_c), fake::error(api_errc::expired, "too old")});
  t.poll();
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  REQUIRE(t.lw->list_calls().size() == 2);
  const auto listed_a = obj("a", "5");
  const auto listed_b = obj("b", "8");
  const auto listed_c = obj("c", "7");
  t.lw->push_list({listed_a, listed_b, listed_c}, "11");
  t.poll();
  CHECK(t.r->stats().reused == 2);
  const auto popped = t.drain();
  std::map<std::string, std::shared_ptr<const thing>> replaced;
  for (const auto& dl : popped) replaced[dl.key] = dl.deltas.back().obj();
  REQUIRE(replaced.size() == 3);
  CHECK(replaced["ns/a"] == cached_a);   // unchanged: the cached object, not the listed copy
  CHECK(replaced["ns/b"] == listed_b);   // changed: the listed object
  CHECK(replaced["ns/c"] == watched_c);  // unchanged: the queued object
  CHECK(listed_a.use_count() == 1);      // the reflector kept no reference to the copies
  CHECK(listed_c.use_count() == 1);
}

TEST_CASE("reflector: a streamed object with the held resourceVersion is the held object", "[informer][reflector]") {
  reflector_rig t([](reflector_params<thing>& o) { o.streaming_list = true; });
  t.lw->push_watch({fake::added(obj("a", "5")), fake::added(obj("b", "6")), fake::bookmark("10", true),
                    fake::error(api_errc::internal_error, "x")});
  t.poll();
  t.drain();
  const auto cached_a = t.cache.get_by_key("ns/a");
  REQUIRE(cached_a);
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  REQUIRE(t.lw->watch_calls().size() == 2);
  CHECK(t.lw->watch_calls()[1].send_initial_events);
  t.lw->push_watch({fake::added(obj("a", "5")), fake::added(obj("b", "9")), fake::bookmark("11", true)});
  t.poll();
  CHECK(t.r->stats().streaming_syncs == 2);
  CHECK(t.r->stats().reused == 1);
  const auto popped = t.drain();
  REQUIRE(popped.size() == 2);
  for (const auto& dl : popped) {
    if (dl.key == "ns/a") CHECK(dl.deltas.back().obj() == cached_a);
    if (dl.key == "ns/b") CHECK(dl.deltas.back().obj()->rv == "9");
  }
}

TEST_CASE("reflector: cancellation stops it at any await", "[informer][reflector]") {
  {
    reflector_rig t;  // waiting in list
  }
  {
    reflector_rig t;  // waiting in a watch
    t.lw->push_list({}, "1");
    t.poll();
  }
  {
    reflector_rig t;  // waiting in a backoff sleep
    t.lw->push_list_error(api_errc::internal_error, "x");
    t.poll();
    CHECK(t.clk->pending() == 1);
  }
}

namespace {
// What the reflector tells its informer_metrics.
struct reflector_calls final : kube::metrics::informer_metrics {
  std::vector<std::pair<std::size_t, bool>> lists;  // items, relist
  int watches = 0, stalls = 0;
  std::vector<std::size_t> watch_events;
  std::vector<std::string> versions;
  void on_list(std::size_t items, duration, bool relist) override { lists.emplace_back(items, relist); }
  void on_watch() override { ++watches; }
  void on_watch_end(std::size_t events, duration) override { watch_events.push_back(events); }
  void on_watch_stall() override { ++stalls; }
  void on_resource_version(std::string_view rv) override { versions.emplace_back(rv); }
};
}  // namespace

TEST_CASE("reflector: metrics hear of lists and relists, watches, stalls and every resourceVersion",
          "[informer][reflector][metrics]") {
  auto m = std::make_shared<reflector_calls>();
  reflector_rig t([&](reflector_params<thing>& o) { o.metrics = m; });
  t.lw->push_list({obj("a", "5"), obj("b", "6")}, "10");
  t.lw->push_watch({fake::modified(obj("a", "11")), fake::bookmark("12")}, fake::stream_end::eof);
  // A watch silent for watch_idle_timeout fails with timed_out (the client's idle timer).
  t.lw->push_watch({fake::added(obj("c", "13")), fake::error(boost::asio::error::timed_out, "no byte for 150000 ms")});
  t.lw->push_watch({fake::error(api_errc::expired, "too old resource version")});
  t.poll();
  CHECK(t.lw->list_calls().size() == 1);
  REQUIRE(m->lists.size() == 1);
  CHECK(m->lists[0] == std::pair<std::size_t, bool>{2, false});
  CHECK(m->watches == 3);
  CHECK(m->watch_events == std::vector<std::size_t>{2, 1, 0});
  CHECK(m->stalls == 1);
  CHECK(m->versions == std::vector<std::string>{"10", "11", "12", "13"});

  // The 410 relists after its backoff: a relist of one item at version 20.
  t.lw->push_list({obj("a", "20")}, "20");
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  REQUIRE(m->lists.size() == 2);
  CHECK(m->lists[1] == std::pair<std::size_t, bool>{1, true});
  CHECK(m->versions.back() == "20");
}
