// The example of docs/guides/informer.md, compiled with the unit tests so the
// guide cannot rot. (Run against a real cluster it prints configmap events.)
#include <kube/informer/informer_factory.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

#include <catch2/catch.hpp>

#include <iostream>

namespace asio = boost::asio;

// [guide-example]
asio::awaitable<void> watch_configmaps(kube::client c) {
  namespace ki = kube::informer;
  ki::informer_factory factory(c, {.namespace_name = "demo", .strip_managed_fields = true});
  auto cms = factory.for_resource({"", "v1", "configmaps"}, "ConfigMap");
  cms->add_handler({
      [](const auto& obj, bool initial) { std::cout << "add " << obj->name() << (initial ? " (initial)\n" : "\n"); },
      [](const auto& old_obj, const auto& new_obj) {
        std::cout << "update " << new_obj->name() << " " << old_obj->resource_version() << " -> "
                  << new_obj->resource_version() << "\n";
      },
      [](const ki::deleted_object<kube::unstructured>& d) {
        const auto& last = ki::object_of(d);  // may be a tombstone's stale copy
        std::cout << "delete " << (last ? last->name() : "?") << "\n";
      },
  });
  auto when_synced = [&]() -> asio::awaitable<void> {
    co_await factory.async_wait_for_sync(asio::use_awaitable);
    auto lister = cms->make_lister();  // any thread may read it
    for (const auto& cm : lister.in_namespace("demo").list("app=web")) {
      std::cout << "cached: " << cm->name() << "\n";
    }
  };
  using namespace asio::experimental::awaitable_operators;
  // Runs until this coroutine is cancelled (the factory lives as long).
  co_await (factory.async_run(asio::use_awaitable) && when_synced());
}
// [guide-example]

TEST_CASE("guide example compiles", "[informer][guide]") { CHECK(&watch_configmaps != nullptr); }
