// kube::api<T> against the real cluster, over the hand-written test types
// (test/unit/typed/test_types.hpp, written to the codegen contract): CRUD,
// paging, watch, every patch type, apply conflicts between managers,
// preconditions, retry_on_conflict, status and scale subresources,
// eviction, cluster-scoped kinds, decode errors from real responses, and the
// log reader's error path (no kubelet here: pods never run, so a log
// request is refused by the server; that refusal must arrive, not a hang).
#include "support/client_support.hpp"
#include "test_types.hpp"

#include <kube/streams/pod_streams.hpp>
#include <kube/tools/retry.hpp>
#include <kube/typed/api.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <set>

using namespace kube_test;
namespace json = boost::json;
using k8s::apps::v1::Deployment;
using k8s::core::v1::ConfigMap;
using k8s::core::v1::Namespace;
using k8s::core::v1::Pod;

namespace {

constexpr auto tuple = asio::as_tuple(asio::use_awaitable);

ConfigMap configmap(const std::string& name, const std::string& value) {
  ConfigMap cm;  // apiVersion/kind left empty: the client fills them from the traits
  cm.metadata.name = name;
  cm.data.emplace()["k"] = value;
  return cm;
}

Pod pending_pod(const std::string& name) {
  Pod p;
  p.metadata.name = name;
  p.spec = kube::raw_json::parse(R"({"containers":[{"name":"app","image":"busybox"}]})");
  return p;
}

}  // namespace

TEST_CASE("typed create, get, replace - a stale resourceVersion is a conflict - missing is not_found", "[typed]") {
  const auto ns = unique_name("typed-crud");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<ConfigMap> cms(c, ns);
    const auto want = configmap("a", "1");
    auto created = co_await cms.async_create(want);
    CHECK(created.name() == "a");
    CHECK(created.namespace_() == ns);
    CHECK_FALSE(created.uid().empty());
    CHECK(created.kind == "ConfigMap");
    auto got = co_await cms.async_get("a");
    CHECK(got.data->at("k") == "1");
    CHECK(got.resource_version() == created.resource_version());

    auto changed = got;
    (*changed.data)["k"] = "2";
    auto replaced = co_await cms.async_replace(changed);
    CHECK(replaced.data->at("k") == "2");
    CHECK(replaced.resource_version() != got.resource_version());

    auto [ec, r] = co_await cms.async_replace(changed, tuple);  // old resourceVersion
    CHECK(ec == kube::api_errc::conflict);
    auto [ec2, r2] = co_await cms.async_get("missing", tuple);
    CHECK(ec2 == kube::api_errc::not_found);
    try {
      co_await cms.async_get("missing");
      FAIL("no exception");
    } catch (const kube::error& e) {
      CHECK(e.code() == kube::api_errc::not_found);
      CHECK(e.diag().server_message() == "configmaps \"missing\" not found");
    }

    // dry run: validated, not stored
    kube::write_params dry;
    dry.dry_run = true;
    const auto ghost = configmap("ghost", "x");
    auto dr = co_await cms.async_create(ghost, dry);
    CHECK(dr.name() == "ghost");
    auto [ec3, r3] = co_await cms.async_get("ghost", tuple);
    CHECK(ec3 == kube::api_errc::not_found);

    // An all-namespaces api creates in the object's namespace.
    kube::api<ConfigMap> all(c);
    auto elsewhere = configmap("via-all", "1");
    elsewhere.metadata.namespace_ = ns;
    auto made = co_await all.async_create(elsewhere);
    CHECK(made.namespace_() == ns);
  });
}

TEST_CASE("typed list: single pages with limit/continue, list_all across pages, selectors, resourceVersion",
          "[typed][list]") {
  const auto ns = unique_name("typed-list");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<ConfigMap> cms(c, ns);
    for (int i = 0; i < 23; ++i) {
      auto cm = configmap("item-" + std::to_string(i), std::to_string(i));
      cm.metadata.labels.emplace()["parity"] = i % 2 ? "odd" : "even";
      co_await cms.async_create(cm);
    }
    kube::list_params page;
    page.limit = 10;
    auto first = co_await cms.async_list(page);
    CHECK(first.items.size() == 10);
    REQUIRE(first.metadata);
    REQUIRE(first.metadata->continue_);
    kube::list_params next = page;
    next.continue_token = *first.metadata->continue_;
    auto second = co_await cms.async_list(next);
    CHECK(second.items.size() == 10);
    CHECK(second.items.front().name() != first.items.front().name());

    auto all = co_await cms.async_list_all(page);
    std::multiset<std::string> names;
    for (const auto& i : all.items) names.insert(std::string(i.name()));
    CHECK(all.items.size() == 23);
    CHECK(std::set<std::string>(names.begin(), names.end()).size() == 23);
    REQUIRE(all.metadata);
    CHECK_FALSE(all.metadata->continue_);
    CHECK(all.metadata->resource_version);

    kube::list_params odd;
    odd.label_selector = "parity=odd";
    auto odds = co_await cms.async_list_all(odd);
    CHECK(odds.items.size() == 11);
    kube::list_params byname;
    byname.field_selector = "metadata.name=item-7";
    auto one = co_await cms.async_list(byname);
    REQUIRE(one.items.size() == 1);
    CHECK(one.items[0].data->at("k") == "7");

    // resourceVersion "0" with NotOlderThan: served from the watch cache.
    kube::list_params cached;
    cached.resource_version = "0";
    cached.resource_version_match = "NotOlderThan";
    auto fromcache = co_await cms.async_list(cached);
    CHECK(fromcache.items.size() >= 1);
    // Exact at the first page's resourceVersion: the same snapshot.
    kube::list_params exact;
    exact.resource_version = *first.metadata->resource_version;
    exact.resource_version_match = "Exact";
    exact.label_selector = "parity=even";
    auto then = co_await cms.async_list_all(exact);
    CHECK(then.items.size() == 12);
    // resourceVersionMatch without a resourceVersion: the server's 422, with its Status.
    kube::list_params invalid;
    invalid.resource_version_match = "Exact";
    auto [ec, l] = co_await cms.async_list(invalid, tuple);
    CHECK(ec == kube::api_errc::invalid);

    // delete_collection with a selector, answering with the deleted objects
    auto gone = co_await cms.async_delete_collection(odd);
    CHECK((gone.object || gone.status));
    auto after = co_await cms.async_list_all(odd);
    CHECK(after.items.empty());
    auto rest = co_await cms.async_list_all();
    CHECK(rest.items.size() == 12);
  });
}

TEST_CASE("typed watch: ADDED, MODIFIED, DELETED with T and the resourceVersion of each", "[typed][watch]") {
  const auto ns = unique_name("typed-watch");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<ConfigMap> cms(c, ns);
    auto list = co_await cms.async_list();
    kube::watch_params wp;
    wp.resource_version = *list.metadata->resource_version;
    wp.timeout_seconds = 20;
    auto w = co_await cms.async_watch(wp);
    const auto one = configmap("w", "1");
    co_await cms.async_create(one);
    co_await cms.async_patch("w", kube::patch_type::merge, R"({"data":{"k":"2"}})");
    co_await cms.async_delete("w");
    std::vector<kube::watch_event_type> seen;
    std::string last_rv;
    while (seen.size() < 3) {
      auto ev = co_await w.async_next();
      if (ev.type == kube::watch_event_type::bookmark) continue;
      CHECK(ev.object.name() == "w");
      CHECK(ev.resource_version == ev.object.resource_version());
      if (ev.type == kube::watch_event_type::modified) CHECK(ev.object.data->at("k") == "2");
      seen.push_back(ev.type);
      last_rv = ev.resource_version;
    }
    CHECK(seen == std::vector<kube::watch_event_type>{kube::watch_event_type::added, kube::watch_event_type::modified,
                                                      kube::watch_event_type::deleted});
    w.close();

    // (ERROR events, e.g. 410 Expired after a compaction, are translated
    // as unit/typed tests; compacting etcd here would disturb other tests.)
  });
}

TEST_CASE("typed patch: JSON patch, merge patch, strategic merge patch", "[typed][patch]") {
  const auto ns = unique_name("typed-patch");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<ConfigMap> cms(c, ns);
    const auto cm1 = configmap("p", "0");
    co_await cms.async_create(cm1);
    auto j =
        co_await cms.async_patch("p", kube::patch_type::json, R"([{"op":"replace","path":"/data/k","value":"json"}])");
    CHECK(j.data->at("k") == "json");
    auto m = co_await cms.async_patch("p", kube::patch_type::merge, R"({"data":{"k":"merge","m":"x"}})");
    CHECK(m.data->at("k") == "merge");
    auto s = co_await cms.async_patch("p", kube::patch_type::strategic_merge, R"({"metadata":{"labels":{"s":"1"}}})");
    CHECK(s.metadata.labels->at("s") == "1");
    CHECK(s.data->at("m") == "x");
    auto [ec, r] = co_await cms.async_patch("p", kube::patch_type::json, R"({"not":"a list"})", tuple);
    CHECK(ec);
  });
}

TEST_CASE("server-side apply twice with two field managers - a conflict without force", "[typed][apply]") {
  const auto ns = unique_name("typed-apply");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<ConfigMap> cms(c, ns);
    kube::patch_params alice;
    alice.field_manager = "alice";
    const auto mine = configmap("ssa", "mine");
    auto a = co_await cms.async_apply(mine, alice);
    CHECK(a.data->at("k") == "mine");
    auto a2 = co_await cms.async_apply(mine, alice);  // same intent: no change
    CHECK(a2.resource_version() == a.resource_version());

    // bob owns another key: both managers' fields coexist.
    kube::patch_params bob;
    bob.field_manager = "bob";
    ConfigMap bobs;
    bobs.metadata.name = "ssa";
    bobs.data.emplace()["b"] = "bob";
    auto b = co_await cms.async_apply(bobs, bob);
    CHECK(b.data->at("k") == "mine");
    CHECK(b.data->at("b") == "bob");

    // bob now wants alice's key: conflict, unless forced.
    (*bobs.data)["k"] = "theirs";
    auto [ec, r] = co_await cms.async_apply(bobs, bob, tuple);
    CHECK(ec == kube::api_errc::conflict);
    bob.force = true;
    auto forced = co_await cms.async_apply(bobs, bob);
    CHECK(forced.data->at("k") == "theirs");

    auto [ec2, r2] = co_await cms.async_apply(bobs, tuple);  // no field manager
    CHECK(ec2 == kube::client_errc::invalid_config);
  });
}

TEST_CASE("delete: a wrong UID precondition is refused with conflict - dry run keeps the object", "[typed][delete]") {
  const auto ns = unique_name("typed-delete");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<ConfigMap> cms(c, ns);
    const auto cm2 = configmap("d", "1");
    auto created = co_await cms.async_create(cm2);
    kube::delete_params wrong;
    wrong.precondition_uid = "00000000-0000-0000-0000-000000000000";
    auto [ec, r] = co_await cms.async_delete("d", wrong, tuple);
    CHECK(ec == kube::api_errc::conflict);
    kube::delete_params stale;
    stale.precondition_resource_version = "1";
    auto [ec1, r1] = co_await cms.async_delete("d", stale, tuple);
    CHECK(ec1 == kube::api_errc::conflict);

    kube::delete_params dry;
    dry.dry_run = true;
    auto d = co_await cms.async_delete("d", dry);
    CHECK((d.object || d.status));
    co_await cms.async_get("d");  // still there

    kube::delete_params right;
    right.precondition_uid = std::string(created.uid());
    right.propagation_policy = "Background";
    auto deleted = co_await cms.async_delete("d", right);
    // An immediate ConfigMap delete is answered with a Status naming it.
    REQUIRE(deleted.status);
    CHECK_FALSE(deleted.object);
    CHECK(deleted.status->status == "Success");
    CHECK(deleted.status->details_name == "d");
    CHECK(deleted.status->details_uid == created.uid());
    auto [ec2, r2] = co_await cms.async_get("d", tuple);
    CHECK(ec2 == kube::api_errc::not_found);

    // Foreground: the object stays, with the foregroundDeletion finalizer,
    // until the garbage collector (not running here) deletes its dependents.
    const auto cm3 = configmap("fg", "1");
    co_await cms.async_create(cm3);
    kube::delete_params fg;
    fg.propagation_policy = "Foreground";
    auto pending = co_await cms.async_delete("fg", fg);
    REQUIRE(pending.object);
    CHECK(pending.object->metadata.deletion_timestamp);
    REQUIRE(pending.object->metadata.finalizers);
    CHECK(pending.object->metadata.finalizers->front() == "foregroundDeletion");
    co_await cms.async_patch("fg", kube::patch_type::merge, R"({"metadata":{"finalizers":null}})");
  });
}

TEST_CASE("delete of an object with a finalizer answers the object with a deletionTimestamp", "[typed][delete]") {
  const auto ns = unique_name("typed-final");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<ConfigMap> cms(c, ns);
    auto cm = configmap("f", "1");
    cm.metadata.finalizers.emplace().push_back("example.com/hold");
    co_await cms.async_create(cm);
    auto d = co_await cms.async_delete("f");
    REQUIRE(d.object);
    CHECK(d.object->metadata.deletion_timestamp);
    co_await cms.async_patch("f", kube::patch_type::merge, R"({"metadata":{"finalizers":null}})");
    auto [ec, r] = co_await cms.async_get("f", tuple);
    CHECK(ec == kube::api_errc::not_found);
  });
}

TEST_CASE("retry_on_conflict: a get-modify-replace loop survives concurrent writers", "[typed][retry]") {
  const auto ns = unique_name("typed-retry");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<ConfigMap> cms(c, ns);
    const auto cm4 = configmap("counter", "0");
    co_await cms.async_create(cm4);
    int attempts = 0;
    co_await kube::retry_on_conflict([&]() -> asio::awaitable<void> {
      auto cm = co_await cms.async_get("counter");
      ++attempts;
      if (attempts == 1) {
        // Someone else writes between our read and our write: our replace conflicts.
        co_await cms.async_patch("counter", kube::patch_type::merge, R"({"data":{"other":"x"}})");
      }
      (*cm.data)["k"] = std::to_string(std::stoi(cm.data->at("k")) + 1);
      co_await cms.async_replace(cm);
    });
    CHECK(attempts == 2);
    auto cm = co_await cms.async_get("counter");
    CHECK(cm.data->at("k") == "1");
    CHECK(cm.data->at("other") == "x");  // the other writer's change survived
  });
}

TEST_CASE("status and scale subresources of a Deployment - replace_status ignores spec", "[typed][subresource]") {
  const auto ns = unique_name("typed-sub");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<Deployment> deps(c, ns);
    Deployment d;
    d.metadata.name = "web";
    d.spec = kube::raw_json::parse(R"({"replicas":1,"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"busybox"}]}}})");
    auto created = co_await deps.async_create(d);
    CHECK(created.api_version == "apps/v1");

    auto scale = co_await deps.async_get_scale("web");
    REQUIRE(scale.spec);
    CHECK(scale.spec->replicas == 1);
    CHECK(scale.kind == "Scale");
    scale.spec->replicas = 3;
    auto scaled = co_await deps.async_replace_scale("web", scale);
    CHECK(scaled.spec->replicas == 3);
    auto after = co_await deps.async_get("web");
    CHECK(after.spec->value().as_object().at("replicas").as_int64() == 3);

    // Generic form of the same subresource.
    auto generic = co_await deps.async_get_subresource<k8s::autoscaling::v1::Scale>("scale", "web");
    CHECK(generic.spec->replicas == 3);

    // replace_status writes status only.
    auto st = after;
    st.status = kube::raw_json::parse(
        R"({"observedGeneration":1,"replicas":0,"conditions":[{"type":"Progressing","status":"True","reason":"Test"}]})");
    auto spec = st.spec->value();
    spec.as_object()["replicas"] = 7;
    st.spec = kube::raw_json(spec);
    auto written = co_await deps.async_replace_status(st);
    CHECK(written.status->value().as_object().at("conditions").as_array().size() == 1);
    CHECK(written.spec->value().as_object().at("replicas").as_int64() == 3);  // spec untouched

    // A subresource a kind does not have is the server's not_found.
    kube::api<ConfigMap> cms(c, ns);
    const auto cm5 = configmap("noscale", "1");
    co_await cms.async_create(cm5);
    auto [ec, s] = co_await cms.async_get_subresource<k8s::autoscaling::v1::Scale>("scale", "noscale", tuple);
    CHECK(ec == kube::api_errc::not_found);
  });
}

TEST_CASE("pods: eviction deletes a pending pod - the log reader reports the server's refusal", "[typed][pods]") {
  const auto ns = unique_name("typed-pods");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<Pod> pods(c, ns);
    const auto p = pending_pod("p");
    co_await pods.async_create(p);

    // This cluster has no nodes or kubelets, so no log line can exist. The
    // apiserver (v1.34) answers the log of a pod with no node with an empty
    // 200 body: the stream must end (eof) at once, even with follow.
    kube::log_params lp;
    lp.follow = true;
    lp.container = "app";
    auto stream = co_await kube::async_logs(pods, "p", lp);
    auto [rec, line] = co_await stream.async_read_line(tuple);
    CHECK(rec == asio::error::eof);
    CHECK(line.empty());
    auto [rec2, line2] = co_await stream.async_read_line(tuple);  // and keeps saying so
    CHECK(rec2 == asio::error::eof);
    CHECK_FALSE(stream.is_open());

    // The server's refusals arrive as errors with its Status, not as a hang.
    kube::log_params wrong;
    wrong.container = "nope";
    try {
      co_await kube::async_logs(pods, "p", wrong);
      FAIL("no exception");
    } catch (const kube::error& e) {
      INFO(e.what());
      CHECK(e.code() == kube::api_errc::bad_request);
      CHECK(e.diag().server_message() == "container nope is not valid for pod p");
    }
    kube::log_params negative;
    negative.tail_lines = -1;
    auto [ec1, s1] = co_await kube::async_logs(pods, "p", negative, tuple);
    CHECK(ec1 == kube::api_errc::invalid);
    auto [ec2, s2] = co_await kube::async_logs(pods, "nosuchpod", tuple);
    CHECK(ec2 == kube::api_errc::not_found);

    auto st = co_await pods.async_evict("p");
    CHECK(st.status == "Success");
    // A pod never scheduled is deleted at once.
    auto [ec3, gone] = co_await pods.async_get("p", tuple);
    CHECK(ec3 == kube::api_errc::not_found);
    auto [ec4, st4] = co_await pods.async_evict("p", tuple);
    CHECK(ec4 == kube::api_errc::not_found);
  });
}

TEST_CASE("cluster-scoped kinds: Namespace create, get, list, delete", "[typed][cluster]") {
  with_admin_client([](kube::client c) -> asio::awaitable<void> {
    kube::api<Namespace> nss(c);
    Namespace n;
    n.metadata.name = unique_name("typed-cluster");
    n.metadata.labels.emplace()["typed-test"] = "yes";
    auto made = co_await nss.async_create(n);
    CHECK(made.name() == *n.metadata.name);
    CHECK(made.namespace_().empty());
    kube::list_params sel;
    sel.label_selector = "typed-test=yes";
    auto l = co_await nss.async_list_all(sel);
    CHECK(l.items.size() >= 1);
    auto d = co_await nss.async_delete(*n.metadata.name);
    // A namespace with content finalization: the object with a deletionTimestamp.
    REQUIRE(d.object);
    CHECK(d.object->metadata.deletion_timestamp);
  });
}

namespace {
// A type that claims to be a ConfigMap but expects numbers in data.
struct NumericConfigMap {
  std::optional<std::string> api_version, kind;
  k8s::meta::v1::ObjectMeta metadata;
  std::optional<std::map<std::string, std::int64_t>> data;
};
struct NumericConfigMapList {
  std::optional<k8s::meta::v1::ListMeta> metadata;
  std::vector<NumericConfigMap> items;
};
void decode(const json::value& in, NumericConfigMap& out, const kube::json_path& at);
void decode(const json::value& in, NumericConfigMapList& out, const kube::json_path& at);
}  // namespace
template <>
struct kube::resource_traits<NumericConfigMap> {
  static constexpr std::string_view group = "";
  static constexpr std::string_view version = "v1";
  [[maybe_unused]] static constexpr std::string_view api_version = "v1";
  static constexpr std::string_view kind = "ConfigMap";
  static constexpr std::string_view plural = "configmaps";
  static constexpr bool namespaced = true;
  using list_type = NumericConfigMapList;
};
namespace {
void decode(const json::value& in, NumericConfigMap& out, const kube::json_path& at) {
  const auto& o = in.as_object();
  if (const auto* md = o.if_contains("metadata")) {
    const kube::json_path here{&at, "metadata"};
    decode(*md, out.metadata, here);
  }
  if (const auto* d = o.if_contains("data")) {
    const kube::json_path here{&at, "data"};
    const auto& m = d->as_object();
    auto& dst = out.data.emplace();
    for (const auto& kv : m) {
      const kube::json_path k{&here, std::string_view(kv.key().data(), kv.key().size())};
      std::int64_t v = 0;
      kube::codec::decode(kv.value(), v, k);
      dst[std::string(kv.key())] = v;
    }
  }
}
void decode(const json::value& in, NumericConfigMapList& out, const kube::json_path& at) {
  const auto& items = in.as_object().at("items").as_array();
  const kube::json_path ip{&at, "items"};
  for (std::size_t i = 0; i < items.size(); ++i) {
    const kube::json_path here{&ip, {}, i};
    decode(items[i], out.items.emplace_back(), here);
  }
}
}  // namespace

TEST_CASE("a real response that does not fit the type is a decode_error naming the object and the field",
          "[typed][decode]") {
  const auto ns = unique_name("typed-misfit");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<ConfigMap> cms(c, ns);
    const auto cm6 = configmap("text", "not-a-number");
    co_await cms.async_create(cm6);
    kube::api<NumericConfigMap> nums(c, ns);
    try {
      co_await nums.async_get("text");
      FAIL("no exception");
    } catch (const kube::error& e) {
      const std::string m = e.diag().client_message();
      INFO(m);
      CHECK(e.code() == kube::client_errc::decode_error);
      CHECK(m.find("\"text\"") != std::string::npos);
      CHECK(m.find(".data.k") != std::string::npos);
    }
    auto [ec, l] = co_await nums.async_list(tuple);
    CHECK(ec == kube::client_errc::decode_error);
    CHECK(l.items.empty());
  });
}
