// Metadata-only objects: recorded apiserver answers (test/data/metadata)
// decoded into the generated k8s::meta::v1::PartialObjectMetadata(List),
// bad input naming the field path, the cut-down of a whole object a server
// sent instead, and a shared informer of metadata with listers and label
// selectors (scripted fake lister_watcher, manual clock, no network).
#include <kube/base/manual_clock.hpp>
#include <kube/informer/fake_lister_watcher.hpp>
#include <kube/informer/informer_factory.hpp>
#include <kube/informer/metadata_lister_watcher.hpp>
#include <kube/informer/shared_informer.hpp>
#include <kube/dynamic/metadata_api.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace ki = kube::informer;
namespace asio = boost::asio;
using kube::partial_object_metadata;
using kube::partial_object_metadata_list;

namespace {

std::string data_file(const std::string& name) {
  const std::string path = std::string(KUBE_METADATA_TEST_DATA_DIR) + "/" + name;
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string decode_error_path(const std::string& text) {
  try {
    (void)kube::from_json<partial_object_metadata_list>(text);
  } catch (const kube::decode_error& e) {
    return e.path();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("metadata: a recorded PartialObjectMetadataList decodes into the generated types", "[metadata]") {
  const auto list = kube::from_json<partial_object_metadata_list>(data_file("configmaps.partial-list.json"));
  CHECK(list.kind == "PartialObjectMetadataList");
  CHECK(list.api_version == "meta.k8s.io/v1");
  REQUIRE(list.metadata);
  CHECK(list.metadata->resource_version.value_or("").size() > 0);
  REQUIRE(list.items.size() == 2);
  CHECK(list.unknown_fields.empty());

  const auto& db = list.items[0];
  const auto& web = list.items[1];
  CHECK(db.name() == "db");
  CHECK(web.name() == "web");
  CHECK(web.namespace_() == "rec");
  CHECK(!web.resource_version().empty());
  CHECK(!web.uid().empty());
  CHECK(kube::is_partial_object_metadata(web));
  CHECK(web.api_version == "meta.k8s.io/v1");
  CHECK(web.labels() == std::map<std::string, std::string>{{"app", "web"}, {"tier", "front"}});
  CHECK(web.metadata.annotations == std::map<std::string, std::string>{{"note", "hello"}});
  CHECK(db.labels() == std::map<std::string, std::string>{{"app", "db"}});
  CHECK_FALSE(db.metadata.annotations);
  REQUIRE(web.metadata.managed_fields);
  CHECK(web.metadata.managed_fields->size() == 3);
  CHECK(web.metadata.creation_timestamp);
  CHECK(web.unknown_fields.empty());  // nothing but apiVersion, kind, metadata

  // Encoding writes back what was read.
  const auto again = kube::from_json<partial_object_metadata_list>(kube::to_json(list));
  REQUIRE(again.items.size() == 2);
  CHECK(again.items[1].labels() == web.labels());
  CHECK(again.items[1].metadata.annotations == web.metadata.annotations);
  CHECK(again.items[1].resource_version() == web.resource_version());
  CHECK(again.items[1].metadata.managed_fields->size() == 3);
}

TEST_CASE("metadata: unknown members are kept - a whole object sent instead is cut down to its metadata",
          "[metadata]") {
  // What a server without the PartialObjectMetadata conversion sends (the
  // plain application/json fallback of the Accept header).
  auto list = kube::from_json<partial_object_metadata_list>(data_file("configmaps.whole-list.json"));
  CHECK(list.kind == "ConfigMapList");
  REQUIRE(list.items.size() == 2);
  auto web = list.items[1];
  CHECK(web.name() == "web");
  CHECK_FALSE(kube::is_partial_object_metadata(web));   // items of a plain list carry no kind
  REQUIRE(web.unknown_fields.find("data") != nullptr);  // kept, as every generated type keeps them
  CHECK(kube::to_json(web).find("\"level\"") != std::string::npos);

  ki::detail::prepare_metadata(web, true, false);
  CHECK(web.unknown_fields.empty());
  CHECK(kube::to_json(web).find("\"data\"") == std::string::npos);
  CHECK(web.labels().at("app") == "web");
  CHECK(web.metadata.managed_fields);

  ki::detail::prepare_metadata(web, false, true);
  CHECK_FALSE(web.metadata.managed_fields);
  CHECK(web.labels().at("tier") == "front");
}

TEST_CASE("metadata: bad input names the field path", "[metadata]") {
  CHECK(decode_error_path(R"({"items":[{"metadata":{"name":"a"}},{"metadata":{"labels":["x"]}}]})") ==
        ".items[1].metadata.labels");
  CHECK(decode_error_path(R"({"items":[{"metadata":{"name":"a","resourceVersion":5}}]})") ==
        ".items[0].metadata.resourceVersion");
  CHECK(decode_error_path(R"({"items":{"a":1}})") == ".items");
  CHECK(decode_error_path(R"({"items":[],"metadata":{"continue":false}})") == ".metadata.continue");
  CHECK(decode_error_path(R"({"items":[{"kind":7}]})") == ".items[0].kind");
  CHECK(decode_error_path("[]") == ".");
  CHECK(decode_error_path("{\"items\":[") == ".");  // not JSON at all
  try {
    (void)kube::from_json<partial_object_metadata>(R"({"metadata":{"annotations":{"a":1}}})");
    FAIL("no error");
  } catch (const kube::decode_error& e) {
    CHECK(e.path() == ".metadata.annotations.a");
    CHECK(std::string(e.what()).find("expected a string") != std::string::npos);
  }
}

TEST_CASE("metadata: the client asks for PartialObjectMetadata with a plain JSON fallback", "[metadata]") {
  CHECK(kube::partial_object_metadata_accept ==
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json");
  CHECK(kube::partial_object_metadata_list_accept ==
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json");
}

TEST_CASE("metadata informer: cache - listers and label selectors on partial_object_metadata", "[metadata]") {
  using fake = ki::fake_lister_watcher<partial_object_metadata>;
  asio::io_context io;
  auto clk = std::make_shared<kube::manual_clock>();
  auto lw = std::make_shared<fake>();
  ki::informer_params<partial_object_metadata> o;
  o.reflector.clk = clk;
  o.reflector.random = [] { return 0.5; };
  o.reflector.streaming_list = false;  // the fake is scripted list first
  ki::shared_index_informer<partial_object_metadata> inf(io.get_executor(), lw, std::move(o));

  auto list = kube::from_json<partial_object_metadata_list>(data_file("configmaps.partial-list.json"));
  std::vector<std::shared_ptr<const partial_object_metadata>> items;
  for (auto& i : list.items) items.push_back(std::make_shared<const partial_object_metadata>(std::move(i)));
  auto changed = *items[1];
  changed.metadata.labels = std::map<std::string, std::string>{{"app", "db"}};
  changed.metadata.resource_version = "9999";
  lw->push_list(items, *list.metadata->resource_version);
  ki::event<partial_object_metadata> upd;
  upd.type = ki::event_type::modified;
  upd.object = std::make_shared<const partial_object_metadata>(changed);
  upd.resource_version = "9999";
  lw->push_watch({upd});

  std::vector<std::string> seen;
  inf.add_handler({[&](const auto& obj, bool) { seen.push_back("add " + std::string(obj->name())); },
                   [&](const auto&, const auto& n) { seen.push_back("update " + std::string(n->name())); }, nullptr});
  asio::cancellation_signal stop;
  bool done = false;
  inf.async_run(asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code) { done = true; }));
  io.poll();
  io.restart();
  io.poll();

  CHECK(inf.has_synced());
  CHECK(seen == std::vector<std::string>{"add db", "add web", "update web"});
  auto lister = inf.make_lister();  // labels() of the generated type
  CHECK(lister.list().size() == 2);
  CHECK(lister.get("rec", "web")->resource_version() == "9999");
  CHECK(lister.list("rec", ki::label_selector::parse("app=db")).size() == 2);
  CHECK(lister.list("app=web").empty());
  CHECK(lister.list("rec", ki::label_selector::parse("app in (db),tier")).empty());
  CHECK(lister.list("other", ki::label_selector::parse("app=db")).empty());

  stop.emit(asio::cancellation_type::terminal);
  io.restart();
  io.poll();
  CHECK(done);
}

// The example of docs/guides/informer.md ("Metadata-only informers"),
// compiled here so the guide cannot rot.
// [metadata-guide-example]
asio::awaitable<void> secrets_by_owner(kube::client c) {
  ki::informer_factory factory(c, {.namespace_name = "demo", .strip_managed_fields = true});
  // Names, labels, annotations, owners of every Secret: no secret data in memory.
  auto secrets = factory.for_metadata({"", "v1", "secrets"});
  secrets->add_handler({[](const std::shared_ptr<const kube::partial_object_metadata>& md, bool) {
                          std::cout << "secret " << md->name() << " rv " << md->resource_version() << "\n";
                        },
                        nullptr, nullptr});
  auto report = [&]() -> asio::awaitable<void> {
    co_await factory.async_wait_for_sync(asio::use_awaitable);
    for (const auto& md : secrets->make_lister().list("demo", ki::label_selector::parse("app=web"))) {
      const auto& annotations = md->metadata.annotations;  // k8s::meta::v1::ObjectMeta
      std::cout << md->name() << (annotations && annotations->count("owner") ? " owned\n" : "\n");
    }
  };
  using namespace asio::experimental::awaitable_operators;
  co_await (factory.async_run(asio::use_awaitable) && report());  // until cancelled
}
// [metadata-guide-example]

TEST_CASE("metadata guide example compiles", "[metadata][guide]") { CHECK(&secrets_by_owner != nullptr); }
