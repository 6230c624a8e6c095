// kube::dynamic_api against the real cluster: CRUD, optimistic concurrency,
// every patch format, server-side apply conflicts, preconditions,
// pagination, delete_collection and watch, on kube::unstructured.
#include "support/client_support.hpp"

#include <kube/rest/write_observer.hpp>
#include <kube/dynamic/dynamic_api.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace kube_test;
namespace json = boost::json;

namespace {

const kube::group_version_resource configmaps{"", "v1", "configmaps"};

kube::unstructured configmap(const std::string& name, const std::string& value) {
  kube::unstructured u;
  u.set_api_version("v1").set_kind("ConfigMap").set_name(name);
  u.object()["data"] = json::object{{"k", value}};
  return u;
}

// Runs a coroutine body against a fresh client; failures inside are
// reported by Catch from the io thread.
template <class F>
void with_api(const std::string& ns, F body) {
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  kube::dynamic_api api(c, configmaps, ns);
  std::exception_ptr failure;
  asio::co_spawn(io, body(api), [&](std::exception_ptr e) { failure = e; });
  io.run();
  if (failure) std::rethrow_exception(failure);
}

std::string data_of(const kube::unstructured& u) {
  return std::string(u.object().at("data").as_object().at("k").as_string());
}

}  // namespace

TEST_CASE("dynamic create, get, replace, and a stale resourceVersion is a conflict", "[dynamic]") {
  const auto ns = unique_name("dyn-crud");
  create_namespace(ns);
  with_api(ns, [](kube::dynamic_api api) -> asio::awaitable<void> {
    auto created = co_await api.async_create(configmap("a", "1"));
    CHECK(created.name() == "a");
    CHECK_FALSE(created.uid().empty());
    auto got = co_await api.async_get("a");
    CHECK(data_of(got) == "1");
    CHECK(got.resource_version() == created.resource_version());

    auto changed = got;
    changed.object()["data"].as_object()["k"] = "2";
    auto replaced = co_await api.async_replace(changed);
    CHECK(data_of(replaced) == "2");

    // Replacing again from the old copy (old resourceVersion) must conflict.
    auto [ec, r] = co_await api.async_replace(changed, asio::as_tuple(asio::use_awaitable));
    CHECK(ec == kube::api_errc::conflict);
    auto [ec2, r2] = co_await api.async_get("missing", asio::as_tuple(asio::use_awaitable));
    CHECK(ec2 == kube::api_errc::not_found);
  });
}

TEST_CASE("dynamic patch: JSON patch, merge patch and strategic merge patch", "[dynamic][patch]") {
  const auto ns = unique_name("dyn-patch");
  create_namespace(ns);
  with_api(ns, [](kube::dynamic_api api) -> asio::awaitable<void> {
    co_await api.async_create(configmap("p", "0"));
    auto j =
        co_await api.async_patch("p", kube::patch_type::json, R"([{"op":"replace","path":"/data/k","value":"json"}])");
    CHECK(data_of(j) == "json");
    auto m = co_await api.async_patch("p", kube::patch_type::merge, R"({"data":{"k":"merge","m":"x"}})");
    CHECK(data_of(m) == "merge");
    auto s = co_await api.async_patch("p", kube::patch_type::strategic_merge, R"({"metadata":{"labels":{"s":"1"}}})");
    CHECK(s.labels().at("s") == "1");
    CHECK(s.object().at("data").as_object().at("m") == "x");  // untouched by the label patch
    // A malformed JSON patch is refused by the server, not by a crash here.
    auto [ec, r] = co_await api.async_patch("p", kube::patch_type::json, R"({"not":"a list"})",
                                            asio::as_tuple(asio::use_awaitable));
    CHECK(ec);
  });
}

TEST_CASE("server-side apply: a second manager conflicts unless it forces", "[dynamic][apply]") {
  const auto ns = unique_name("dyn-apply");
  create_namespace(ns);
  with_api(ns, [](kube::dynamic_api api) -> asio::awaitable<void> {
    const std::string mine = configmap("ssa", "mine").to_json();
    kube::patch_params alice;
    alice.field_manager = "alice";
    auto a = co_await api.async_patch("ssa", kube::patch_type::apply, mine, alice);
    CHECK(data_of(a) == "mine");
    // Applying the same again is a no-op success.
    auto a2 = co_await api.async_patch("ssa", kube::patch_type::apply, mine, alice);
    CHECK(a2.resource_version() == a.resource_version());

    kube::patch_params bob;
    bob.field_manager = "bob";
    const std::string theirs = configmap("ssa", "theirs").to_json();
    auto [ec, r] =
        co_await api.async_patch("ssa", kube::patch_type::apply, theirs, bob, asio::as_tuple(asio::use_awaitable));
    CHECK(ec == kube::api_errc::conflict);
    bob.force = true;
    auto forced = co_await api.async_patch("ssa", kube::patch_type::apply, theirs, bob);
    CHECK(data_of(forced) == "theirs");

    // Apply without a field manager is refused before any request.
    auto [ec2, r2] =
        co_await api.async_patch("ssa", kube::patch_type::apply, theirs, asio::as_tuple(asio::use_awaitable));
    CHECK(ec2 == kube::client_errc::invalid_config);
  });
}

TEST_CASE("delete with a wrong UID precondition is a conflict, with the right one it deletes", "[dynamic][delete]") {
  const auto ns = unique_name("dyn-delete");
  create_namespace(ns);
  with_api(ns, [](kube::dynamic_api api) -> asio::awaitable<void> {
    auto created = co_await api.async_create(configmap("d", "1"));
    kube::delete_params wrong;
    wrong.precondition_uid = "00000000-0000-0000-0000-000000000000";
    auto [ec, r] = co_await api.async_delete("d", wrong, asio::as_tuple(asio::use_awaitable));
    CHECK(ec == kube::api_errc::conflict);
    kube::delete_params right;
    right.precondition_uid = created.uid();
    co_await api.async_delete("d", right);
    auto [ec2, r2] = co_await api.async_get("d", asio::as_tuple(asio::use_awaitable));
    CHECK(ec2 == kube::api_errc::not_found);
  });
}

TEST_CASE("list_all follows continue tokens and returns every object exactly once", "[dynamic][list]") {
  const auto ns = unique_name("dyn-list");
  create_namespace(ns);
  with_api(ns, [](kube::dynamic_api api) -> asio::awaitable<void> {
    for (int i = 0; i < 25; ++i) {
      auto cm = configmap("item-" + std::to_string(i), std::to_string(i));
      cm.set_label("batch", "one");
      co_await api.async_create(cm);
    }
    kube::list_params page;
    page.limit = 10;
    auto first = co_await api.async_list(page);
    CHECK(first.items.size() == 10);
    CHECK_FALSE(first.continue_token.empty());

    auto all = co_await api.async_list_all(page);
    std::multiset<std::string> names;
    for (const auto& i : all.items) names.insert(i.name());
    CHECK(all.items.size() == 25);
    CHECK(std::set<std::string>(names.begin(), names.end()).size() == 25);
    CHECK(all.continue_token.empty());
    CHECK_FALSE(all.resource_version.empty());

    kube::list_params sel;
    sel.label_selector = "batch=one";
    co_await api.async_delete_collection(sel);
    auto after = co_await api.async_list_all(sel);
    CHECK(after.items.empty());
  });
}

TEST_CASE("dynamic watch sees a create made through the same API", "[dynamic][watch]") {
  const auto ns = unique_name("dyn-watch");
  create_namespace(ns);
  with_api(ns, [](kube::dynamic_api api) -> asio::awaitable<void> {
    auto list = co_await api.async_list();
    kube::watch_params wp;
    wp.resource_version = list.resource_version;
    wp.timeout_seconds = 10;
    auto w = co_await api.async_watch(wp);
    co_await api.async_create(configmap("watched", "1"));
    for (;;) {
      auto ev = co_await w.async_next();
      if (ev.type == kube::watch_event_type::bookmark) continue;
      CHECK(ev.type == kube::watch_event_type::added);
      CHECK(kube::unstructured(ev.object).name() == "watched");
      break;
    }
    w.close();
  });
}

namespace {
struct write_log final : kube::write_observer {
  std::vector<std::string> seen;  // "group/resource ns/name@rv"
  void on_written(const kube::written_object& w) noexcept override {
    seen.push_back(std::string(w.group) + "/" + std::string(w.resource) + " " + std::string(w.namespace_) + "/" +
                   std::string(w.name) + "@" + std::string(w.resource_version));
  }
};
}  // namespace

TEST_CASE("dynamic writes are told to the client's write observers with the stored resourceVersion",
          "[dynamic][write_observer]") {
  const auto ns = unique_name("dyn-observed");
  create_namespace(ns);
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  auto log = std::make_shared<write_log>();
  kube::add_write_observer(c, log);
  std::vector<std::string> want;
  std::exception_ptr failure;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        kube::dynamic_api api(c, configmaps, ns);
        const auto at = [&](const kube::unstructured& u) { return "/configmaps " + ns + "/w@" + u.resource_version(); };
        // Objects passed to co_await'ed calls are named (g++ 12 and class
        // temporaries inside co_await: docs/guides/client.md).
        const auto w1 = configmap("w", "1");
        const auto dry_one = configmap("dry", "1");
        const auto w_again = configmap("w", "again");
        auto created = co_await api.async_create(w1);
        want.push_back(at(created));
        co_await api.async_get("w");  // a read: not told
        auto changed = created;
        changed.object()["data"].as_object()["k"] = "2";
        auto replaced = co_await api.async_replace(changed);
        want.push_back(at(replaced));
        auto patched = co_await api.async_patch("w", kube::patch_type::merge, R"({"data":{"k":"3"}})");
        want.push_back(at(patched));
        kube::write_params dry;
        dry.dry_run = true;
        co_await api.async_create(dry_one, dry);  // stores nothing: not told
        auto [ec, r] = co_await api.async_create(w_again, asio::as_tuple(asio::use_awaitable));
        CHECK(ec == kube::api_errc::already_exists);  // failed: not told
      },
      [&](std::exception_ptr e) { failure = e; });
  io.run();
  if (failure) std::rethrow_exception(failure);
  CHECK(log->seen == want);
  CHECK(want.size() == 3);
}
