// controller<T> over informers fed by scripted fake lister_watchers (no
// network): caches synced before the first reconcile, primary events,
// owned-object events enqueue the controller owner, mapping functions,
// "gone" for deleted objects. Generated types: ConfigMap primary, Secret
// owned, Service watched through a mapping function.
#include <kube/k8s/core/v1/config_map.hpp>
#include <kube/k8s/core/v1/secret.hpp>
#include <kube/k8s/core/v1/service.hpp>
#include <kube/controller/controller.hpp>
#include <kube/informer/fake_lister_watcher.hpp>
#include <kube/base/manual_clock.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace asio = boost::asio;
namespace kc = kube::controller;
namespace ki = kube::informer;
using ConfigMap = k8s::core::v1::ConfigMap;
using Secret = k8s::core::v1::Secret;
using Service = k8s::core::v1::Service;
using namespace std::chrono_literals;

namespace {

void settle(asio::io_context& io) {
  io.restart();
  io.poll();
}

template <class T>
std::shared_ptr<const T> make(const std::string& ns, const std::string& name, const std::string& rv) {
  T o;
  o.metadata.namespace_ = ns;
  o.metadata.name = name;
  o.metadata.resource_version = rv;
  o.metadata.uid = "uid-" + name;
  return std::make_shared<const T>(std::move(o));
}

std::shared_ptr<const Secret> owned_secret(const std::string& name, const std::string& rv,
                                           const std::string& owner_kind, const std::string& owner_name,
                                           bool controller) {
  auto s = std::make_shared<Secret>(*make<Secret>("ns", name, rv));
  k8s::meta::v1::OwnerReference ref;
  ref.api_version = "v1";
  ref.kind = owner_kind;
  ref.name = owner_name;
  ref.uid = "uid-" + owner_name;
  ref.controller = controller;
  s->metadata.owner_references.emplace().push_back(ref);
  return s;
}

template <class T>
struct source {
  std::shared_ptr<ki::fake_lister_watcher<T>> lw = std::make_shared<ki::fake_lister_watcher<T>>();
  std::shared_ptr<ki::shared_index_informer<T>> inf;
  asio::cancellation_signal stop;
  bool done = false;
  source(asio::io_context& io, const std::shared_ptr<kube::manual_clock>& clk) {
    ki::informer_params<T> o;
    o.reflector.clk = clk;
    o.reflector.random = [] { return 0.5; };
    o.reflector.streaming_list = false;  // the fake is scripted list first
    inf = std::make_shared<ki::shared_index_informer<T>>(io.get_executor(), lw, std::move(o));
  }
  void run() {
    inf->async_run(asio::bind_cancellation_slot(stop.slot(), [this](kube::error_code) { done = true; }));
  }
  // The first list, then a watch that stays open for pushed events.
  void sync(std::vector<std::shared_ptr<const T>> items) {
    lw->push_list(std::move(items), "10");
    lw->push_watch(std::vector<ki::event<T>>{});
  }
  void push(ki::event<T> ev) { lw->stream(lw->streams_opened() - 1)->push(std::move(ev)); }
};

struct rig {
  asio::io_context io;
  std::shared_ptr<kube::manual_clock> iclk = std::make_shared<kube::manual_clock>();
  kube::manual_clock qclk;
  source<ConfigMap> cms{io, iclk};
  source<Secret> secrets{io, iclk};
  source<Service> services{io, iclk};
  std::unique_ptr<kc::controller<ConfigMap>> ctrl;
  // What each reconcile saw: key, and whether the object was in the cache.
  std::vector<std::string> seen;
  std::function<void(const std::string& key)> during;  // runs inside each reconcile
  asio::cancellation_signal stop;
  bool done = false;
  kube::error_code run_ec;

  explicit rig(kc::predicate primary_filter = {}, kc::predicate owned_filter = {}) {
    kc::controller_params o;
    o.name = "cm-controller";
    o.workers = 2;
    o.queue.time_source = &qclk;
    o.primary_filter = std::move(primary_filter);
    ctrl = std::make_unique<kc::controller<ConfigMap>>(io.get_executor(), cms.inf, o);
    ctrl->owns<Secret>(secrets.inf, std::move(owned_filter));
    // A Service "svc-X" maps to the ConfigMap "X" of its namespace, plus a
    // malformed key that must be dropped.
    ctrl->watches<Service>(services.inf, [](const Service& s) {
      std::vector<std::string> keys{"a/b/c"};
      const std::string n(s.name());
      if (n.starts_with("svc-")) keys.push_back(std::string(s.namespace_()) + "/" + n.substr(4));
      return keys;
    });
  }
  void start() {
    cms.run();
    secrets.run();
    services.run();
    ctrl->async_run(
        [this](kc::reconcile_request<ConfigMap> req) -> asio::awaitable<kc::reconcile_result> {
          seen.push_back(req.key + (req.gone() ? " gone" : " rv=" + std::string(req.object->resource_version())));
          if (during) during(req.key);
          CHECK(req.namespace_ + "/" + req.name == req.key);
          co_return kc::reconcile_result::done();
        },
        asio::bind_cancellation_slot(stop.slot(), [this](kube::error_code ec) {
          run_ec = ec;
          done = true;
        }));
    settle(io);
  }
  void poll() { settle(io); }
  bool saw(const std::string& s) const { return std::find(seen.begin(), seen.end(), s) != seen.end(); }
  ~rig() {
    stop.emit(asio::cancellation_type::terminal);
    settle(io);
    CHECK(done);
    CHECK(run_ec == asio::error::operation_aborted);
    cms.stop.emit(asio::cancellation_type::terminal);
    secrets.stop.emit(asio::cancellation_type::terminal);
    services.stop.emit(asio::cancellation_type::terminal);
    settle(io);
  }
};

}  // namespace

TEST_CASE("controller: no reconcile until every informer has synced - then the initial list", "[controller]") {
  rig t;
  t.start();
  t.cms.sync({make<ConfigMap>("ns", "a", "1"), make<ConfigMap>("ns", "b", "2")});
  t.secrets.sync({});
  t.poll();
  CHECK(t.seen.empty());  // the Services informer has not listed yet
  CHECK_FALSE(t.ctrl->loop().started());
  t.services.sync({});
  t.poll();
  CHECK(t.ctrl->loop().started());
  REQUIRE(t.seen.size() == 2);
  CHECK(t.saw("ns/a rv=1"));
  CHECK(t.saw("ns/b rv=2"));
}

TEST_CASE("controller: primary updates and deletes - a deleted object is reconciled as gone", "[controller]") {
  rig t;
  t.start();
  t.cms.sync({make<ConfigMap>("ns", "a", "1")});
  t.secrets.sync({});
  t.services.sync({});
  t.poll();
  REQUIRE(t.seen.size() == 1);
  t.cms.push(ki::fake_lister_watcher<ConfigMap>::modified(make<ConfigMap>("ns", "a", "5")));
  t.poll();
  REQUIRE(t.seen.size() == 2);
  CHECK(t.seen[1] == "ns/a rv=5");
  t.cms.push(ki::fake_lister_watcher<ConfigMap>::deleted(make<ConfigMap>("ns", "a", "6")));
  t.poll();
  REQUIRE(t.seen.size() == 3);
  CHECK(t.seen[2] == "ns/a gone");
}

TEST_CASE("controller: owned objects enqueue their controller owner only", "[controller]") {
  rig t;
  t.start();
  t.cms.sync({make<ConfigMap>("ns", "owner", "1")});
  t.secrets.sync({});
  t.services.sync({});
  t.poll();
  t.seen.clear();
  using fs = ki::fake_lister_watcher<Secret>;
  // Controller reference to our kind: the owner is reconciled.
  t.secrets.push(fs::added(owned_secret("s1", "2", "ConfigMap", "owner", true)));
  t.poll();
  CHECK(t.seen == std::vector<std::string>{"ns/owner rv=1"});
  // Not a controller reference, or another kind: nothing.
  t.secrets.push(fs::added(owned_secret("s2", "3", "ConfigMap", "owner", false)));
  t.secrets.push(fs::added(owned_secret("s3", "4", "Deployment", "owner", true)));
  t.poll();
  CHECK(t.seen.size() == 1);
  // Update and delete of the owned object enqueue the owner too; an owner
  // that is not in the cache is reconciled as gone.
  t.secrets.push(fs::modified(owned_secret("s1", "5", "ConfigMap", "owner", true)));
  t.poll();
  CHECK(t.seen.size() == 2);
  t.secrets.push(fs::deleted(owned_secret("s1", "6", "ConfigMap", "owner", true)));
  t.poll();
  REQUIRE(t.seen.size() == 3);
  CHECK(t.seen.back() == "ns/owner rv=1");
  t.secrets.push(fs::added(owned_secret("s4", "7", "ConfigMap", "nobody", true)));
  t.poll();
  REQUIRE(t.seen.size() == 4);
  CHECK(t.seen.back() == "ns/nobody gone");
}

TEST_CASE("controller: watched objects enqueue what the mapping function returns", "[controller]") {
  rig t;
  t.start();
  t.cms.sync({make<ConfigMap>("ns", "web", "1")});
  t.secrets.sync({});
  t.services.sync({make<Service>("ns", "svc-web", "1")});
  t.poll();
  // The initial list of services mapped to ns/web too: one reconcile (the
  // queue stores a key once) or two, never a malformed key.
  for (const auto& s : t.seen) CHECK(s == "ns/web rv=1");
  t.seen.clear();
  t.services.push(ki::fake_lister_watcher<Service>::added(make<Service>("ns", "svc-db", "2")));
  t.poll();
  CHECK(t.seen == std::vector<std::string>{"ns/db gone"});
  t.services.push(ki::fake_lister_watcher<Service>::added(make<Service>("ns", "other", "3")));
  t.poll();
  CHECK(t.seen.size() == 1);  // mapped only to the malformed key: dropped
  CHECK(t.ctrl->stats().failed == 0);
}

namespace {
// `o` with metadata.generation and labels set (a copy).
template <class T>
std::shared_ptr<const T> with(std::shared_ptr<const T> o, std::int64_t generation,
                              std::vector<std::pair<std::string, std::string>> labels = {}) {
  auto c = std::make_shared<T>(*o);
  c->metadata.generation = generation;
  if (!labels.empty()) {
    auto& l = c->metadata.labels.emplace();
    for (auto& [k, v] : labels) l[k] = v;
  }
  return c;
}

k8s::meta::v1::ObjectMeta meta(std::string rv, std::int64_t generation, std::string label = {},
                               std::string annotation = {}) {
  k8s::meta::v1::ObjectMeta m;
  m.resource_version = std::move(rv);
  m.generation = generation;
  if (!label.empty()) m.labels.emplace()["l"] = label;
  if (!annotation.empty()) m.annotations.emplace()["a"] = annotation;
  return m;
}
}  // namespace

TEST_CASE("predicates: the ready-made ones judge updates, adds and deletes pass, and && || ! combine them",
          "[controller][predicate]") {
  const auto m1 = meta("1", 1, "x", "p");
  const auto status_write = meta("2", 1, "x", "p");  // same generation, labels, annotations
  const auto spec_change = meta("3", 2, "x", "p");
  const auto relabel = meta("4", 1, "y", "p");
  const auto annotate = meta("5", 1, "x", "q");
  auto update = [](const k8s::meta::v1::ObjectMeta& a, const k8s::meta::v1::ObjectMeta& b) {
    return kc::event_view{kc::event_kind::updated, &a, &b};
  };
  const kc::event_view add{kc::event_kind::added, nullptr, &m1};
  const kc::event_view del{kc::event_kind::deleted, nullptr, &m1};
  const kc::event_view del_unknown{kc::event_kind::deleted, nullptr, nullptr};

  const auto gen = kc::generation_changed();
  CHECK_FALSE(gen(update(m1, status_write)));
  CHECK(gen(update(m1, spec_change)));
  CHECK_FALSE(gen(update(m1, m1)));  // a resync
  CHECK(gen(add));
  CHECK(gen(del));
  CHECK(gen(del_unknown));

  const auto labels = kc::labels_changed();
  CHECK_FALSE(labels(update(m1, spec_change)));
  CHECK(labels(update(m1, relabel)));
  // An absent map and an empty one are the same labels.
  k8s::meta::v1::ObjectMeta none, empty;
  empty.labels.emplace();
  CHECK_FALSE(labels(update(none, empty)));
  CHECK(labels(update(none, m1)));

  const auto annotations = kc::annotations_changed();
  CHECK_FALSE(annotations(update(m1, relabel)));
  CHECK(annotations(update(m1, annotate)));

  const auto rv = kc::resource_version_changed();
  CHECK_FALSE(rv(update(m1, m1)));
  CHECK(rv(update(m1, status_write)));

  // An update without both objects has nothing to compare: dropped.
  CHECK_FALSE(gen(kc::event_view{kc::event_kind::updated, nullptr, &m1}));

  CHECK((gen || labels)(update(m1, relabel)));
  CHECK((gen || labels)(update(m1, spec_change)));
  CHECK_FALSE((gen || labels)(update(m1, annotate)));
  CHECK_FALSE((gen && rv)(update(m1, status_write)));
  CHECK((gen && rv)(update(m1, spec_change)));
  CHECK((!gen)(update(m1, status_write)));
  CHECK_FALSE((!gen)(add));  // ! drops what it let through, adds included

  // The default predicate lets everything through, and is neutral in && (and
  // makes || let everything through).
  const kc::predicate all;
  CHECK(all.passes_all());
  CHECK(all(update(m1, m1)));
  CHECK_FALSE((all && gen)(update(m1, status_write)));
  CHECK((all || gen)(update(m1, status_write)));

  const auto custom = kc::update_if([](const auto& a, const auto& b) { return a.name != b.name; });
  k8s::meta::v1::ObjectMeta named = m1;
  named.name = "other";
  CHECK(custom(update(m1, named)));
  CHECK_FALSE(custom(update(m1, status_write)));
  CHECK(custom(del));
}

TEST_CASE("predicates: an unstructured object's metadata is decoded, malformed metadata names the field",
          "[controller][predicate]") {
  kube::unstructured u(boost::json::parse(R"({"apiVersion":"v1","kind":"ConfigMap",
      "metadata":{"name":"a","generation":3,"labels":{"k":"v"},"resourceVersion":"9"}})")
                           .as_object());
  const auto m = kc::metadata_of(u);
  CHECK(m.name == "a");
  CHECK(m.generation == 3);
  CHECK(m.resource_version == "9");
  REQUIRE(m.labels);
  CHECK(m.labels->at("k") == "v");
  kube::unstructured bad(boost::json::parse(R"({"metadata":{"generation":"three"}})").as_object());
  try {
    (void)kc::metadata_of(bad);
    FAIL("no decode_error");
  } catch (const kube::decode_error& e) {
    CHECK(std::string(e.what()).find(".metadata.generation") != std::string::npos);
  }
}

TEST_CASE("controller: event filters - the primary on generation, owned objects on labels", "[controller][predicate]") {
  rig t(kc::generation_changed(), kc::labels_changed());
  t.start();
  t.cms.sync({with(make<ConfigMap>("ns", "a", "1"), 1)});
  t.secrets.sync({});
  t.services.sync({});
  t.poll();
  REQUIRE(t.seen == std::vector<std::string>{"ns/a rv=1"});  // adds pass
  using fc = ki::fake_lister_watcher<ConfigMap>;
  // A status write (same generation) does not wake the controller...
  t.cms.push(fc::modified(with(make<ConfigMap>("ns", "a", "2"), 1)));
  t.poll();
  CHECK(t.seen.size() == 1);
  // ...a spec change does.
  t.cms.push(fc::modified(with(make<ConfigMap>("ns", "a", "3"), 2)));
  t.poll();
  REQUIRE(t.seen.size() == 2);
  CHECK(t.seen[1] == "ns/a rv=3");
  // Owned Secrets: only a change of labels (and adds and deletes) counts.
  using fs = ki::fake_lister_watcher<Secret>;
  t.secrets.push(fs::added(owned_secret("s1", "4", "ConfigMap", "a", true)));
  t.poll();
  CHECK(t.seen.size() == 3);
  t.secrets.push(fs::modified(owned_secret("s1", "5", "ConfigMap", "a", true)));
  t.poll();
  CHECK(t.seen.size() == 3);
  t.secrets.push(fs::modified(with(owned_secret("s1", "6", "ConfigMap", "a", true), 0, {{"tier", "web"}})));
  t.poll();
  CHECK(t.seen.size() == 4);
  t.secrets.push(fs::deleted(owned_secret("s1", "7", "ConfigMap", "a", true)));
  t.poll();
  CHECK(t.seen.size() == 5);
  // Deletes of the primary pass.
  t.cms.push(fc::deleted(with(make<ConfigMap>("ns", "a", "8"), 2)));
  t.poll();
  REQUIRE(t.seen.size() == 6);
  CHECK(t.seen.back() == "ns/a gone");
}

TEST_CASE("controller: enqueue checks the key - registering after start is refused", "[controller]") {
  rig t;
  CHECK_THROWS_AS(t.ctrl->enqueue("a/b/c"), std::invalid_argument);
  CHECK_THROWS_AS(t.ctrl->enqueue(""), std::invalid_argument);
  t.start();
  t.cms.sync({});
  t.secrets.sync({});
  t.services.sync({});
  t.poll();
  t.ctrl->enqueue("ns/by-hand");
  t.poll();
  CHECK(t.seen == std::vector<std::string>{"ns/by-hand gone"});
  // Registering after start is refused.
  CHECK_THROWS_AS(t.ctrl->owns<Secret>(t.secrets.inf), std::logic_error);
}

TEST_CASE("write_memory: a reconcile's writes wait for the key's next reconcile, newest per resource",
          "[controller][read_your_writes]") {
  kube::controller::write_memory m;
  // Secrets in any namespace; Deployments only in "ns" (a namespaced factory's).
  m.set_resources({{"", "secrets", ""}, {"apps", "deployments", "ns"}});
  auto write = [&](std::string_view group, std::string_view resource, std::string_view rv) {
    m.on_written({group, resource, "ns", "x", rv});
  };
  write("", "secrets", "5");  // no reconcile runs: nobody's
  const auto a = m.begin();
  write("", "secrets", "7");
  write("", "secrets", "12");
  write("", "secrets", "9");  // older than 12: 12 stays
  write("apps", "deployments", "8");
  write("", "configmaps", "13");                              // no informer of ours: not kept
  m.on_written({"apps", "deployments", "other", "x", "14"});  // outside the informer's namespace: not kept
  write("", "secrets", "");                                   // no resourceVersion: not kept
  const auto b = m.begin();                                   // overlaps a: a write now counts for both
  write("", "secrets", "20");
  m.end(a, "ns/a");
  write("", "secrets", "21");  // b only
  m.end(b, "ns/b");
  CHECK(m.keys() == 2);

  auto got_a = m.take("ns/a");
  REQUIRE(got_a.size() == 2);
  CHECK(got_a[0].resource == "secrets");
  CHECK(got_a[0].resource_version == "20");
  CHECK(got_a[0].watched == 0);
  CHECK(got_a[1].group == "apps");
  CHECK(got_a[1].resource_version == "8");
  CHECK(got_a[1].watched == 1);
  CHECK(m.take("ns/a").empty());  // taken: the next reconcile does not wait again
  auto got_b = m.take("ns/b");
  REQUIRE(got_b.size() == 1);
  CHECK(got_b[0].resource_version == "21");
  CHECK(m.keys() == 0);

  // Two reconciles of one key, one after the other, before the next: merged.
  const auto c = m.begin();
  write("", "secrets", "30");
  m.end(c, "ns/c");
  const auto d = m.begin();
  write("apps", "deployments", "31");
  m.end(d, "ns/c");
  CHECK(m.take("ns/c").size() == 2);
}

TEST_CASE("write_memory: a write is kept only for the informers whose namespace and selector could show it",
          "[controller][read_your_writes]") {
  kube::controller::write_memory m;
  // Two informers of ConfigMaps: one in "src" selecting sync=true, one in "dst" selecting everything.
  m.set_resources({{"", "configmaps", "src", "sync=true"}, {"", "configmaps", "dst"}, {"", "secrets", ""}});
  const kube::string_map<std::string> synced{{"sync", "true"}};
  const kube::string_map<std::string> plain{{"app", "x"}};
  const auto id = m.begin();
  m.on_written({"", "configmaps", "dst", "copy", "5", &plain});   // dst only
  m.on_written({"", "configmaps", "src", "other", "6", &plain});  // src, but its selector leaves it out: nobody's
  m.on_written({"", "configmaps", "src", "a", "7", &synced});     // src
  m.on_written({"", "secrets", "src", "s", "8", nullptr});        // labels unknown: kept for any selector
  m.end(id, "src/a");
  auto got = m.take("src/a");
  REQUIRE(got.size() == 3);
  CHECK(got[0].watched == 1);
  CHECK(got[0].resource_version == "5");
  CHECK(got[1].watched == 0);
  CHECK(got[1].resource_version == "7");
  CHECK(got[2].watched == 2);
  // Labels unknown (a writer that cannot say): the selecting informer may show it.
  const auto id2 = m.begin();
  m.on_written({"", "configmaps", "src", "b", "9", nullptr});
  m.end(id2, "src/b");
  auto got_b = m.take("src/b");
  REQUIRE(got_b.size() == 1);
  CHECK(got_b[0].watched == 0);
}

TEST_CASE("controller: the next reconcile of a key waits until its informers observed the key's writes, bounded",
          "[controller][read_your_writes]") {
  rig t;
  std::vector<std::string> writes;  // "key rv": what the next reconcile of key writes
  t.during = [&](const std::string& key) {
    if (!writes.empty() && writes.front().starts_with(key + " ")) {
      const std::string rv = writes.front().substr(key.size() + 1);
      writes.erase(writes.begin());
      // What the client tells the controller after a write of a Secret.
      t.ctrl->writes()->on_written({"", "secrets", "ns", "child", rv});
    }
  };
  writes.push_back("ns/a 50");
  t.start();
  t.cms.sync({make<ConfigMap>("ns", "a", "1"), make<ConfigMap>("ns", "b", "2")});
  t.secrets.sync({});
  t.services.sync({});
  t.poll();
  CHECK(t.seen.size() == 2);
  t.seen.clear();
  using fc = ki::fake_lister_watcher<ConfigMap>;
  using fs = ki::fake_lister_watcher<Secret>;

  // a wrote Secret 50: its next reconcile waits for the Secret informer to observe it; b's does not.
  t.cms.push(fc::modified(make<ConfigMap>("ns", "a", "20")));
  t.cms.push(fc::modified(make<ConfigMap>("ns", "b", "21")));
  t.poll();
  CHECK(t.seen == std::vector<std::string>{"ns/b rv=21"});
  t.secrets.push(fs::added(make<Secret>("ns", "child", "50")));
  t.poll();
  CHECK(t.seen == std::vector<std::string>{"ns/b rv=21", "ns/a rv=20"});
  CHECK(t.ctrl->writes()->keys() == 0);

  // Waited for once: the reconcile after that reads at once.
  t.cms.push(fc::modified(make<ConfigMap>("ns", "a", "22")));
  t.poll();
  CHECK(t.seen.back() == "ns/a rv=22");

  // A write the informer never shows (say, filtered out): the wait ends at
  // controller_params::read_your_writes_timeout (10 s), by the queue's clock.
  writes.push_back("ns/a 99");
  t.cms.push(fc::modified(make<ConfigMap>("ns", "a", "23")));
  t.poll();
  CHECK(t.seen.back() == "ns/a rv=23");  // this reconcile wrote 99
  t.cms.push(fc::modified(make<ConfigMap>("ns", "a", "24")));
  t.poll();
  CHECK(t.seen.back() == "ns/a rv=23");  // waits
  t.qclk.advance(9s);
  t.poll();
  CHECK(t.seen.back() == "ns/a rv=23");
  t.qclk.advance(1s);
  t.poll();
  CHECK(t.seen.back() == "ns/a rv=24");
}
