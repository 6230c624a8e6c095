// kube::finalizers against the real apiserver: add ours next to another
// controller's, run cleanup when kubectl deletes the object, remove only
// ours; a concurrent change forces a reread instead of an overwrite. The
// same through the typed client (kube::api<ConfigMap>).
#include "support.hpp"

#include <kube/k8s/core/v1/config_map.hpp>
#include <kube/dynamic/dynamic_api.hpp>
#include <kube/tools/finalizer.hpp>
#include <kube/typed/api.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/json.hpp>

using namespace kube_test;
using namespace std::chrono_literals;
namespace json = boost::json;

namespace {

const char* ours = "example.com/cleanup";
const char* theirs = "other.example.com/keep";

std::string finalizers_of(const std::string& ns, const std::string& name) {
  return capture(kubectl() + "get configmap -n " + ns + " " + name + " -o jsonpath={.metadata.finalizers}");
}

}  // namespace

TEST_CASE("finalizer: add ours, cleanup on kubectl delete, remove only ours", "[finalizer][integration]") {
  const auto ns = unique_name("fin");
  create_namespace(ns);
  run_test([&](kube::client c) -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    kube::dynamic_api cms(c, {"", "v1", "configmaps"}, ns);
    kube::unstructured cm;
    cm.set_api_version("v1").set_kind("ConfigMap").set_name("guarded");
    cm.metadata()["finalizers"] = json::array{theirs};
    auto obj = co_await cms.async_create(cm);

    int cleanups = 0;
    kube::finalizers::cleanup_fn cleanup = [&](const kube::unstructured& o) -> asio::awaitable<void> {
      CHECK(kube::finalizers::is_being_deleted(o));
      ++cleanups;
      co_return;
    };

    // Alive: ensure ours (and only add).
    auto r1 = co_await kube::finalizers::async_handle(ex, cms, obj, ours, cleanup);
    CHECK(r1.action == kube::finalizers::action::added);
    CHECK(finalizers_of(ns, "guarded") == R"(["other.example.com/keep","example.com/cleanup"])");
    // Again: nothing to do, no write (resourceVersion unchanged).
    auto r2 = co_await kube::finalizers::async_handle(ex, cms, r1.object, ours, cleanup);
    CHECK(r2.action == kube::finalizers::action::none);
    CHECK(r2.object.resource_version() == r1.object.resource_version());
    CHECK(cleanups == 0);

    // kubectl deletes it; both finalizers hold it.
    REQUIRE(sh(kubectl() + "delete configmap -n " + ns + " guarded --wait=false") == 0);
    auto deleting = co_await cms.async_get("guarded");
    REQUIRE(kube::finalizers::is_being_deleted(deleting));

    // Cleanup that fails keeps our finalizer.
    kube::finalizers::cleanup_fn failing = [](const kube::unstructured&) -> asio::awaitable<void> {
      throw std::runtime_error("backend unreachable");
      co_return;
    };
    auto [fec, fres] =
        co_await kube::finalizers::async_handle(ex, cms, deleting, ours, failing, asio::as_tuple(asio::use_awaitable));
    CHECK(fec == boost::system::errc::state_not_recoverable);
    CHECK(finalizers_of(ns, "guarded") == R"(["other.example.com/keep","example.com/cleanup"])");

    auto r3 = co_await kube::finalizers::async_handle(ex, cms, deleting, ours, cleanup);
    CHECK(r3.action == kube::finalizers::action::finalized);
    CHECK(cleanups == 1);
    // Ours is gone, theirs stays, so the object still exists.
    CHECK(finalizers_of(ns, "guarded") == R"(["other.example.com/keep"])");
    // Without ours, a deleting object needs nothing from us.
    auto r4 = co_await kube::finalizers::async_handle(ex, cms, r3.object, ours, cleanup);
    CHECK(r4.action == kube::finalizers::action::none);
    CHECK(cleanups == 1);

    // The other controller finishes: the object goes away.
    REQUIRE(sh(kubectl() + "patch configmap -n " + ns +
               " guarded --type=json -p '[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]'") == 0);
    auto [gec, gone] = co_await cms.async_get("guarded", asio::as_tuple(asio::use_awaitable));
    CHECK(gec == kube::api_errc::not_found);
  });
}

TEST_CASE("finalizer: a stale copy rereads on conflict and keeps a finalizer added meanwhile",
          "[finalizer][integration][conflict]") {
  const auto ns = unique_name("fin-conflict");
  create_namespace(ns);
  run_test([&](kube::client c) -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    kube::dynamic_api cms(c, {"", "v1", "configmaps"}, ns);
    kube::unstructured cm;
    cm.set_api_version("v1").set_kind("ConfigMap").set_name("raced");
    auto stale = co_await cms.async_create(cm);
    // Another controller adds its finalizer after we read the object.
    REQUIRE(sh(kubectl() + "patch configmap -n " + ns + " raced --type=merge -p '{\"metadata\":{\"finalizers\":[\"" +
               theirs + "\"]}}'") == 0);

    // The merge patch from the stale copy would drop theirs; it is pinned to
    // the old resourceVersion, so the server refuses it and we reread.
    auto added = co_await kube::finalizers::async_ensure(ex, cms, stale, ours);
    CHECK(kube::finalizers::list(added) == std::vector<std::string>{theirs, ours});
    CHECK(finalizers_of(ns, "raced") == R"(["other.example.com/keep","example.com/cleanup"])");

    // Removing from a stale copy (without theirs in it) must not drop theirs either.
    auto removed = co_await kube::finalizers::async_remove(ex, cms, stale, ours);  // stale has no ours: no-op
    CHECK(removed.resource_version() == stale.resource_version());
    auto stale2 = added;
    REQUIRE(sh(kubectl() + "annotate configmap -n " + ns + " raced touched=yes") == 0);  // bump the version
    auto removed2 = co_await kube::finalizers::async_remove(ex, cms, stale2, ours);
    CHECK(kube::finalizers::list(removed2) == std::vector<std::string>{theirs});
    CHECK(finalizers_of(ns, "raced") == R"(["other.example.com/keep"])");

    // Bad input is refused before any request.
    kube::unstructured unnamed;
    auto [bec, bres] =
        co_await kube::finalizers::async_ensure(ex, cms, unnamed, ours, asio::as_tuple(asio::use_awaitable));
    CHECK(bec == kube::client_errc::invalid_config);
    REQUIRE(sh(kubectl() + "patch configmap -n " + ns +
               " raced --type=json -p '[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]'") == 0);
  });
}

TEST_CASE("finalizer (typed): ensure from a stale copy keeps theirs, handle cleans up and removes only ours",
          "[finalizer][integration][typed]") {
  const auto ns = unique_name("fin-typed");
  create_namespace(ns);
  run_test([&](kube::client c) -> asio::awaitable<void> {
    using k8s::core::v1::ConfigMap;
    kube::api<ConfigMap> cms(c, ns);
    ConfigMap cm;
    cm.metadata.name = "typed";
    auto stale = std::make_shared<const ConfigMap>(co_await cms.async_create(cm));
    CHECK_FALSE(kube::finalizers::contains(*stale, ours));
    // Another controller adds its finalizer after we read the object.
    REQUIRE(sh(kubectl() + "patch configmap -n " + ns + " typed --type=merge -p '{\"metadata\":{\"finalizers\":[\"" +
               theirs + "\"]}}'") == 0);

    int cleanups = 0;
    const std::function<asio::awaitable<void>(const ConfigMap&)> cleanup =
        [&](const ConfigMap& o) -> asio::awaitable<void> {
      CHECK(kube::finalizers::is_being_deleted(o));
      ++cleanups;
      co_return;
    };
    // Alive, from the stale copy: the guarded patch is refused, reread, ours added next to theirs.
    auto a1 = co_await kube::finalizers::handle(cms, stale, ours, cleanup);
    CHECK(a1 == kube::finalizers::action::added);
    CHECK(finalizers_of(ns, "typed") == R"(["other.example.com/keep","example.com/cleanup"])");
    auto now = std::make_shared<const ConfigMap>(co_await cms.async_get("typed"));
    CHECK(kube::finalizers::contains(*now, ours));
    const bool wrote = co_await kube::finalizers::ensure(cms, *now, ours);
    CHECK_FALSE(wrote);  // present: no write
    auto a2 = co_await kube::finalizers::handle(cms, now, ours, cleanup);
    CHECK(a2 == kube::finalizers::action::none);
    const std::shared_ptr<const ConfigMap> gone;
    auto a3 = co_await kube::finalizers::handle(cms, gone, ours, cleanup);
    CHECK(a3 == kube::finalizers::action::none);

    // kubectl deletes it: cleanup runs once, ours goes, theirs stays.
    REQUIRE(sh(kubectl() + "delete configmap -n " + ns + " typed --wait=false") == 0);
    auto deleting = std::make_shared<const ConfigMap>(co_await cms.async_get("typed"));
    REQUIRE(kube::finalizers::is_being_deleted(*deleting));
    auto a4 = co_await kube::finalizers::handle(cms, deleting, ours, cleanup);
    CHECK(a4 == kube::finalizers::action::finalized);
    CHECK(cleanups == 1);
    CHECK(finalizers_of(ns, "typed") == R"(["other.example.com/keep"])");
    const bool removed = co_await kube::finalizers::remove(cms, *deleting, ours);
    CHECK_FALSE(removed);  // the guarded patch is refused, the reread has no ours

    REQUIRE(sh(kubectl() + "patch configmap -n " + ns +
               " typed --type=json -p '[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]'") == 0);
  });
}
