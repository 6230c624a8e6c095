// Listers and label selectors over an Indexer, no I/O.
#include <kube/dynamic/unstructured.hpp>
#include <kube/informer/indexer.hpp>
#include <kube/informer/label_selector.hpp>
#include <kube/informer/lister.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>

using namespace kube::informer;

TEST_CASE("label_selector: equality, set-based, existence and comparisons, as the API server parses them",
          "[informer][lister]") {
  const std::map<std::string, std::string> l{{"app", "web"}, {"tier", "front"}, {"example.com/v", "3"}};
  auto m = [&](const char* s) { return label_selector::parse(s).matches(l); };
  CHECK(m(""));
  CHECK(m("app=web"));
  CHECK(m("app==web"));
  CHECK_FALSE(m("app=db"));
  CHECK(m("app!=db"));
  CHECK(m("missing!=x"));  // != matches objects without the key
  CHECK(m("app in (web, db)"));
  CHECK_FALSE(m("app notin (web)"));
  CHECK(m("missing notin (web)"));
  CHECK(m("tier"));
  CHECK_FALSE(m("!tier"));
  CHECK(m("!missing"));
  CHECK(m("example.com/v>2"));
  CHECK_FALSE(m("example.com/v<3"));
  CHECK(m("app=web, tier in (front,back), !missing"));
  CHECK_FALSE(m("app=web,tier=back"));
  for (const char* bad : {"app=", "=web", "app in web", "app in (web", "app=we b", "-app=web", "app>x", "app=web,"}) {
    INFO(bad);
    if (std::string(bad) == "app=") {
      CHECK(label_selector::parse(bad).matches(std::map<std::string, std::string>{{"app", ""}}));
      continue;
    }
    CHECK_THROWS_AS(label_selector::parse(bad), std::invalid_argument);
  }
  CHECK_THROWS_WITH(label_selector::parse("app in web"), Catch::Contains("label selector \"app in web\""));
}

TEST_CASE("lister: get and list by namespace and label selector from the cache", "[informer][lister]") {
  auto cache = std::make_shared<indexer<kube::unstructured>>();
  auto add = [&](const char* ns, const char* name, const char* app) {
    kube::unstructured u;
    u.set_namespace(ns).set_name(name).set_label("app", app);
    cache->add(std::make_shared<const kube::unstructured>(std::move(u)));
  };
  add("a", "one", "web");
  add("a", "two", "db");
  add("b", "three", "web");
  lister<kube::unstructured> l(cache);
  CHECK(l.list().size() == 3);
  CHECK(l.list("app=web").size() == 2);
  CHECK(l.list("a", label_selector::parse("app=web")).size() == 1);
  CHECK(l.in_namespace("a").list().size() == 2);
  REQUIRE(l.in_namespace("b").get("three"));
  CHECK(l.get("b", "three")->name() == "three");
  CHECK_FALSE(l.get("a", "three"));
  CHECK(l.in_namespace("zzz").list().empty());
  CHECK_THROWS_AS(l.list("app in"), std::invalid_argument);
  // A labels function replaces the type's own labels for selection.
  lister<kube::unstructured> by_name(cache, [](const kube::unstructured& u) {
    return kube::string_map<std::string>{{"name", std::string(u.name())}};
  });
  CHECK(by_name.list("name=one").size() == 1);
  CHECK(by_name.list("app=web").empty());
  CHECK(by_name.list("b", label_selector::parse("name in (one,three)")).size() == 1);
}
