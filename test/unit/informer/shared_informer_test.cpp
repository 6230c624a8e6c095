// SharedIndexInformer and the async DeltaFIFO, driven by the scripted fake
// and a manual clock on a polled io_context.
#include "rig.hpp"

#include <kube/informer/lister.hpp>
#include <kube/informer/shared_informer.hpp>
#include <kube/informer/transform.hpp>
#include <kube/dynamic/unstructured.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/json/parse.hpp>

using namespace kube::informer;
using namespace kube::informer::test;
using kube::api_errc;
using kube::error_code;

namespace {

std::shared_ptr<const thing> obj(const std::string& name, const std::string& rv) { return make("ns", name, rv); }

struct recorder {
  std::vector<std::string> log;
  event_handler<thing> handler() {
    return {
        [this](const std::shared_ptr<const thing>& o, bool initial) {
          log.push_back("add " + o->nm + "@" + o->rv + (initial ? " initial" : ""));
        },
        [this](const std::shared_ptr<const thing>& a, const std::shared_ptr<const thing>& b) {
          log.push_back("update " + a->nm + "@" + a->rv + "->" + b->rv);
        },
        [this](const deleted_object<thing>& d) {
          const auto& o = object_of(d);
          const bool tomb = std::holds_alternative<deleted_final_state_unknown<thing>>(d);
          log.push_back(std::string(tomb ? "tombstone " : "delete ") + (o ? o->nm + "@" + o->rv : "?"));
        },
    };
  }
};

struct informer_rig {
  asio::io_context io;
  std::shared_ptr<kube::manual_clock> clk = std::make_shared<kube::manual_clock>();
  std::shared_ptr<fake> lw = std::make_shared<fake>();
  std::vector<error_code> errors;
  std::unique_ptr<shared_index_informer<thing>> inf;
  asio::cancellation_signal stop;
  bool done = false;
  error_code run_ec;

  explicit informer_rig(const std::function<void(informer_params<thing>&)>& tweak = {}) {
    informer_params<thing> o;
    o.reflector.clk = clk;
    o.reflector.random = [] { return 0.5; };
    o.reflector.streaming_list = false;  // the fake is scripted list first
    o.on_watch_error = [this](const kube::informer::watch_failure& f) { errors.push_back(f.ec); };
    if (tweak) {
      tweak(o);
    }
    inf = std::make_unique<shared_index_informer<thing>>(io.get_executor(), lw, std::move(o));
  }
  void start() {
    inf->async_run(asio::bind_cancellation_slot(stop.slot(), [this](error_code ec) {
      run_ec = ec;
      done = true;
    }));
    poll();
  }
  void poll() { settle(io); }
  ~informer_rig() {
    stop.emit(asio::cancellation_type::terminal);
    poll();
    CHECK(done);
    CHECK(run_ec == asio::error::operation_aborted);
  }
};

}  // namespace

TEST_CASE("delta_fifo: async_pop waits for the producer - close ends it - cancellation aborts it - requeue",
          "[informer][delta_fifo]") {
  asio::io_context io;
  delta_fifo<thing> f;
  std::vector<std::string> got;
  error_code last;
  auto pop = [&] {
    f.async_pop(asio::bind_executor(io, [&](error_code ec, delta_list<thing> dl) {
      last = ec;
      if (!ec) {
        got.push_back(dl.key);
      }
    }));
  };
  pop();
  settle(io);
  CHECK(got.empty());
  f.add(obj("a", "1"));
  CHECK(got.empty());  // completion is posted, never inline
  settle(io);
  CHECK_FALSE(last);
  CHECK(got == std::vector<std::string>{"ns/a"});
  CHECK(f.empty());

  f.add(obj("b", "1"));
  pop();  // a key is queued: completes at once (posted)
  settle(io);
  CHECK(got.back() == "ns/b");

  // Requeue: back in the FIFO unless the key was queued again meanwhile.
  f.add(obj("c", "1"));
  auto c = f.try_pop();
  REQUIRE(c);
  f.add_if_not_present(*c);
  CHECK(f.list_keys() == std::vector<std::string>{"ns/c"});
  f.add(obj("c", "2"));
  f.add_if_not_present(*c);
  REQUIRE(f.find("ns/c"));
  CHECK(f.find("ns/c")->size() == 2);  // the original one plus the new update, not the stale copy again

  // Cancellation.
  while (f.try_pop()) {}
  asio::cancellation_signal sig;
  f.async_pop(asio::bind_cancellation_slot(
      sig.slot(), asio::bind_executor(io, [&](error_code ec, delta_list<thing>) { last = ec; })));
  settle(io);
  sig.emit(asio::cancellation_type::terminal);
  settle(io);
  CHECK(last == asio::error::operation_aborted);

  // Close: queued keys still come out, then eof.
  f.add(obj("d", "1"));
  f.close();
  pop();
  settle(io);
  CHECK(got.back() == "ns/d");
  pop();
  settle(io);
  CHECK(last == asio::error::eof);
}

TEST_CASE("informer: without on_watch_error, a failed list is logged as a warning that says why",
          "[informer][shared_informer]") {
  std::vector<std::string> lines;
  informer_rig t([&](informer_params<thing>& o) {
    o.name = "things";
    o.on_watch_error = nullptr;  // the default
    o.log.sink = [&](kube::log_level l, std::string_view line) {
      if (l == kube::log_level::warning) lines.emplace_back(line);
    };
  });
  t.start();
  kube::diagnostics d;
  d.set_client_message("GET things: HTTP 403");
  d.set_server_status(boost::json::object{{"kind", "Status"}, {"message", "things is forbidden: User \"a\""}});
  t.lw->push_list_error(kube::api_errc::forbidden, d);
  t.poll();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].starts_with("things: GET things: HTTP 403: things is forbidden: User \"a\"; retrying in "));
  t.lw->push_list({}, "10");
  t.lw->push_watch(std::vector<event<thing>>{});
  t.clk->advance(std::chrono::seconds(60));
  t.poll();
  CHECK(t.inf->has_synced());
  CHECK(lines.size() == 1);
}

TEST_CASE("informer: a handler that throws is logged and counted, the others and the informer go on",
          "[informer][shared_informer]") {
  std::vector<std::string> lines;
  informer_rig t([&](informer_params<thing>& o) {
    o.name = "things";
    o.log.sink = [&](kube::log_level l, std::string_view line) {
      if (l == kube::log_level::error) lines.emplace_back(line);
    };
  });
  auto bad = t.inf->add_handler({[](const std::shared_ptr<const thing>& o, bool) {
                                   if (o->nm == "b") throw std::runtime_error("cannot handle b");
                                 },
                                 nullptr, nullptr});
  recorder r;
  auto good = t.inf->add_handler(r.handler());
  t.start();
  t.lw->push_list({}, "10");
  t.lw->push_watch(std::vector<event<thing>>{});
  t.poll();
  t.lw->stream(0)->push(fake::added(obj("a", "11")));
  t.lw->stream(0)->push(fake::added(obj("b", "12")));
  t.lw->stream(0)->push(fake::added(obj("c", "13")));
  t.poll();
  CHECK(r.log == std::vector<std::string>{"add a@11", "add b@12", "add c@13"});
  CHECK(t.inf->handler_errors() == 1);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "things: an event handler threw (the notification is dropped for it): cannot handle b");
  CHECK(t.inf->cache()->list().size() == 3);
}

namespace {
// What an informer tells its metrics besides the reflector's part.
struct informer_calls final : kube::metrics::informer_metrics {
  std::vector<std::size_t> queued;
  int processed = 0, handled = 0, handler_failures = 0, lists = 0;
  void on_list(std::size_t, duration, bool) override { ++lists; }
  void on_queued(std::size_t n) override { queued.push_back(n); }
  void on_processed(duration) override { ++processed; }
  void on_handler(duration took, bool failed) override {
    CHECK(took >= duration::zero());
    ++handled;
    handler_failures += failed ? 1 : 0;
  }
};
}  // namespace

TEST_CASE("informer: metrics hear of the FIFO's depth, each processed item, each handler call and its failure",
          "[informer][shared_informer][metrics]") {
  auto m = std::make_shared<informer_calls>();
  informer_rig t([&](informer_params<thing>& o) {
    o.metrics = m;
    o.log.sink = [](kube::log_level, std::string_view) {};
  });
  auto bad = t.inf->add_handler({[](const std::shared_ptr<const thing>& o, bool) {
                                   if (o->nm == "b") throw std::runtime_error("cannot handle b");
                                 },
                                 nullptr, nullptr});
  t.start();
  t.lw->push_list({obj("a", "5"), obj("b", "6")}, "10");
  t.lw->push_watch(std::vector<event<thing>>{});
  t.poll();
  CHECK(m->lists == 1);  // the reflector reports to the informer's hooks
  REQUIRE(m->queued.size() >= 3);
  CHECK(m->queued.front() == 2);  // after the list's replace
  CHECK(m->queued.back() == 0);   // every item popped
  CHECK(m->processed == 2);
  t.lw->stream(0)->push(fake::added(obj("c", "13")));
  t.poll();
  CHECK(m->processed == 3);
  CHECK(m->handled == 3);
  CHECK(m->handler_failures == 1);
  CHECK(t.inf->handler_errors() == 1);
}

TEST_CASE("informer: handlers see the initial list, updates, deletes and tombstones after a relist",
          "[informer][shared_informer]") {
  informer_rig t;
  recorder r;
  auto reg = t.inf->add_handler(r.handler());
  t.start();
  CHECK_FALSE(t.inf->has_synced());
  t.lw->push_list({obj("a", "1"), obj("b", "2")}, "10");
  t.lw->push_watch(std::vector<event<thing>>{});
  t.poll();
  CHECK(t.inf->has_synced());
  CHECK(reg->has_synced());
  std::sort(r.log.begin(), r.log.end());
  CHECK(r.log == std::vector<std::string>{"add a@1 initial", "add b@2 initial"});
  r.log.clear();

  t.lw->stream(0)->push(fake::added(obj("c", "11")));
  t.lw->stream(0)->push(fake::modified(obj("a", "12")));
  t.lw->stream(0)->push(fake::deleted(obj("c", "13")));
  t.lw->stream(0)->push(fake::error(api_errc::expired, "too old"));
  t.poll();
  // Per key, in FIFO order of keys: c (queued first) with both its deltas, then a.
  CHECK(r.log == std::vector<std::string>{"add c@11", "delete c@13", "update a@1->12"});
  r.log.clear();
  REQUIRE(t.errors.size() == 1);
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  t.lw->push_list({obj("a", "12")}, "20");
  t.lw->push_watch(std::vector<event<thing>>{});  // b vanished while we were not watching
  t.poll();
  CHECK(r.log == std::vector<std::string>{"tombstone b@2"});
  CHECK(t.inf->cache()->list_keys() == std::vector<std::string>{"ns/a"});
}

TEST_CASE("informer: a late handler first receives the cache - removed handlers hear nothing",
          "[informer][shared_informer]") {
  informer_rig t;
  t.start();
  t.lw->push_list({obj("a", "1"), obj("b", "2")}, "10");
  t.lw->push_watch(std::vector<event<thing>>{});
  t.poll();
  REQUIRE(t.inf->has_synced());
  recorder late;
  auto reg = t.inf->add_handler(late.handler());
  CHECK_FALSE(reg->has_synced());  // not yet processed on the strand
  t.poll();
  CHECK(reg->has_synced());
  std::sort(late.log.begin(), late.log.end());
  CHECK(late.log == std::vector<std::string>{"add a@1 initial", "add b@2 initial"});
  late.log.clear();
  t.lw->stream(0)->push(fake::modified(obj("a", "11")));
  t.poll();
  CHECK(late.log == std::vector<std::string>{"update a@1->11"});
  t.inf->remove_handler(reg);
  t.poll();
  t.lw->stream(0)->push(fake::modified(obj("a", "12")));
  t.poll();
  CHECK(late.log.size() == 1);
}

TEST_CASE("informer: async_wait_for_sync completes once synced, and can be cancelled", "[informer][shared_informer]") {
  informer_rig t;
  t.start();
  bool synced = false;
  error_code ec1;
  t.inf->async_wait_for_sync([&](error_code ec) {
    ec1 = ec;
    synced = true;
  });
  asio::cancellation_signal sig;
  error_code ec2;
  t.inf->async_wait_for_sync(asio::bind_cancellation_slot(sig.slot(), [&](error_code ec) { ec2 = ec; }));
  t.poll();
  CHECK_FALSE(synced);
  sig.emit(asio::cancellation_type::terminal);
  t.poll();
  CHECK(ec2 == asio::error::operation_aborted);
  t.lw->push_list({}, "10");
  t.lw->push_watch(std::vector<event<thing>>{});  // an empty first list also syncs
  t.poll();
  CHECK(synced);
  CHECK_FALSE(ec1);
}

TEST_CASE("informer: a second async_run while running completes with already_running", "[informer][shared_informer]") {
  informer_rig t;
  t.start();
  error_code again;
  bool again_done = false;
  t.inf->async_run([&](error_code ec) {
    again = ec;
    again_done = true;
  });
  t.poll();
  CHECK(again_done);
  CHECK(again == kube::client_errc::already_running);
  CHECK_FALSE(t.done);  // the first run goes on
}

TEST_CASE("informer: unchanged resourceVersions reach only handlers whose resync is due",
          "[informer][shared_informer]") {
  informer_rig t;
  recorder fast, never;
  auto r1 = t.inf->add_handler(fast.handler(), {.resync = std::chrono::seconds(10)});
  auto r2 = t.inf->add_handler(never.handler(), {.resync = std::chrono::milliseconds(0)});
  t.start();
  CHECK(t.inf->resync_check_period() == std::chrono::seconds(10));
  t.lw->push_list({obj("a", "1")}, "10");
  t.lw->push_watch(std::vector<event<thing>>{});
  t.poll();
  fast.log.clear();
  never.log.clear();
  t.clk->advance(std::chrono::seconds(10));
  t.poll();
  CHECK(fast.log == std::vector<std::string>{"update a@1->1"});
  CHECK(never.log.empty());
  // A real change goes to everyone.
  t.lw->stream(0)->push(fake::modified(obj("a", "2")));
  t.poll();
  CHECK(fast.log.back() == "update a@1->2");
  CHECK(never.log == std::vector<std::string>{"update a@1->2"});
  // A relist that finds the object unchanged is a sync: not for `never`.
  t.lw->stream(0)->push(fake::error(api_errc::expired, "x"));
  t.poll();
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  t.lw->push_list({obj("a", "2")}, "30");
  t.lw->push_watch(std::vector<event<thing>>{});
  t.poll();
  CHECK(never.log.size() == 1);
}

TEST_CASE("informer: the transform runs before caching - strip_managed_fields drops metadata.managedFields",
          "[informer][shared_informer]") {
  informer_rig t([](informer_params<thing>& o) {
    o.transform = [](std::shared_ptr<const thing> in) {
      auto c = std::make_shared<thing>(*in);
      c->colors = {"transformed"};
      return std::shared_ptr<const thing>(std::move(c));
    };
  });
  t.start();
  t.lw->push_list({obj("a", "1")}, "10");
  t.lw->push_watch(std::vector<event<thing>>{});
  t.poll();
  auto a = t.inf->cache()->get_by_key("ns/a");
  REQUIRE(a);
  CHECK(a->colors == std::vector<std::string>{"transformed"});

  auto u = std::make_shared<const kube::unstructured>(
      boost::json::parse(R"({"kind":"ConfigMap","metadata":{"name":"x","namespace":"n","resourceVersion":"5",
        "managedFields":[{"manager":"kubectl","fieldsV1":{"f:data":{}}}]},"data":{"k":"v"}})")
          .as_object());
  auto s = strip_managed_fields()(u);
  CHECK_FALSE(s->object().at("metadata").as_object().contains("managedFields"));
  CHECK(s->name() == "x");
  CHECK(s->resource_version() == "5");
  CHECK(s->object().at("data").at("k").as_string() == "v");
  CHECK(u->object().at("metadata").as_object().contains("managedFields"));  // input untouched
}

TEST_CASE("informer: async_wait_for_resource_version completes once the cache has observed that version",
          "[informer][shared_informer][resource_version]") {
  informer_rig t;
  std::vector<std::string> done;  // "rv ok" or "rv <error>", in completion order
  auto wait = [&](const std::string& rv, asio::cancellation_slot slot = {}) {
    t.inf->async_wait_for_resource_version(rv, asio::bind_cancellation_slot(slot, [&done, rv](error_code ec) {
                                             done.push_back(rv + (ec ? " " + ec.message() : " ok"));
                                           }));
  };
  wait("10");  // before the informer runs: it waits
  t.poll();
  CHECK(done.empty());
  t.start();
  CHECK(done.empty());
  t.lw->push_list({obj("a", "1"), obj("b", "2")}, "10");
  t.lw->push_watch(std::vector<event<thing>>{});
  t.poll();
  CHECK(done == std::vector<std::string>{"10 ok"});
  CHECK(t.inf->observed_resource_version() == "10");

  wait("9");  // older: at once
  wait("12");
  wait("15");
  t.poll();
  CHECK(done == std::vector<std::string>{"10 ok", "9 ok"});

  t.lw->stream(0)->push(fake::added(obj("c", "11")));
  t.poll();
  CHECK(done.size() == 2);
  t.lw->stream(0)->push(fake::modified(obj("a", "12")));
  t.poll();
  REQUIRE(done.size() == 3);
  CHECK(done[2] == "12 ok");
  CHECK(t.inf->cache()->get_by_key("ns/a")->rv == "12");  // what the waiter may now read

  t.lw->stream(0)->push(fake::bookmark("15"));  // nothing changed up to 15: a bookmark says so
  t.poll();
  REQUIRE(done.size() == 4);
  CHECK(done[3] == "15 ok");

  // Not numbers: refused at once.
  wait("016");
  wait("x");
  t.poll();
  REQUIRE(done.size() == 6);
  CHECK(done[4] == "016 " + make_error_code(std::errc::invalid_argument).message());
  CHECK(done[5] == "x " + make_error_code(std::errc::invalid_argument).message());

  // Cancelled.
  asio::cancellation_signal cancel;
  wait("100", cancel.slot());
  t.poll();
  cancel.emit(asio::cancellation_type::terminal);
  t.poll();
  REQUIRE(done.size() == 7);
  CHECK(done[6] == "100 " + make_error_code(asio::error::operation_aborted).message());

  // The informer stops: its waiters fail, and so do later ones.
  wait("200");
  t.poll();
  CHECK(done.size() == 7);
  t.stop.emit(asio::cancellation_type::terminal);
  t.poll();
  const std::string not_running = make_error_code(kube::client_errc::not_running).message();
  REQUIRE(done.size() == 8);
  CHECK(done[7] == "200 " + not_running);
  wait("1");
  t.poll();
  REQUIRE(done.size() == 9);
  CHECK(done[8] == "1 " + not_running);
}

TEST_CASE("informer: the observed resourceVersion waits for queued deltas and never goes back",
          "[informer][shared_informer][resource_version]") {
  informer_rig t;
  std::vector<std::string> done;
  t.start();
  t.lw->push_list({obj("a", "1")}, "20");
  t.lw->push_watch(std::vector<event<thing>>{});
  t.poll();
  CHECK(t.inf->observed_resource_version() == "20");
  // A watch that ends with 410, then a relist that answers an older list:
  // what the cache observed stays.
  t.lw->stream(0)->push(fake::error(api_errc::expired, "too old"));
  t.poll();
  t.clk->advance(t.clk->next_wake_in());
  t.poll();
  t.lw->push_list({obj("a", "1")}, "18");
  t.lw->push_watch(std::vector<event<thing>>{});
  t.poll();
  CHECK(t.inf->observed_resource_version() == "20");
  t.inf->async_wait_for_resource_version("19", [&](error_code ec) { done.push_back(ec ? ec.message() : "ok"); });
  t.poll();
  CHECK(done == std::vector<std::string>{"ok"});
  // A burst larger than the processor's turn (64 deltas) is applied across
  // several turns of the strand; the waiter completes after the last.
  // It sees every one of them in the cache when it completes.
  t.inf->async_wait_for_resource_version("300", [&](error_code ec) {
    done.push_back(ec ? ec.message() : "ok 300 with " + std::to_string(t.inf->cache()->list_keys().size()));
  });
  for (int i = 0; i < 200; ++i) {
    t.lw->stream(1)->push(fake::added(obj("n" + std::to_string(i), std::to_string(101 + i))));
  }
  t.poll();
  CHECK(done == std::vector<std::string>{"ok", "ok 300 with 201"});
  CHECK(t.inf->cache()->list_keys().size() == 201);
}
