// Indexer: the cache and its indexes stay consistent through every write.
#include "test_object.hpp"

#include <kube/informer/indexer.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace ki = kube::informer;
using ki::test::make;
using ki::test::thing;

namespace {

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> keys_of(const std::vector<std::shared_ptr<const thing>>& objs) {
  std::vector<std::string> out;
  for (const auto& o : objs) {
    out.push_back(ki::meta_namespace_key(*o));
  }
  return sorted(out);
}

ki::index_funcs<thing> by_color() {
  return {{"color", [](const thing& t) { return t.colors; }}};
}

using strings = std::vector<std::string>;

}  // namespace

TEST_CASE("indexer: get, list and keys follow add/update/remove", "[informer][indexer]") {
  ki::indexer<thing> ix;
  ix.add(make("ns", "a", "1"));
  ix.add(make("", "node", "1"));
  CHECK(ix.size() == 2);
  CHECK(sorted(ix.list_keys()) == strings{"node", "ns/a"});
  REQUIRE(ix.get_by_key("ns/a"));
  CHECK(ix.get_by_key("ns/a")->rv == "1");
  ix.update(make("ns", "a", "2"));
  CHECK(ix.get(thing{"ns", "a", "", {}})->rv == "2");
  CHECK(ix.size() == 2);
  ix.remove(make("ns", "a"));
  CHECK(ix.get_by_key("ns/a") == nullptr);
  CHECK(keys_of(ix.list()) == strings{"node"});
  ix.remove_by_key("not-there");  // no-op
  CHECK(ix.size() == 1);
}

TEST_CASE("indexer: the namespace index is built in", "[informer][indexer]") {
  ki::indexer<thing> ix;
  ix.add(make("ns1", "a"));
  ix.add(make("ns1", "b"));
  ix.add(make("ns2", "a"));
  ix.add(make("", "cluster-scoped"));
  CHECK(sorted(ix.index_keys(ki::namespace_index, "ns1")) == strings{"ns1/a", "ns1/b"});
  CHECK(keys_of(ix.by_index(ki::namespace_index, "ns2")) == strings{"ns2/a"});
  CHECK(sorted(ix.list_index_values(ki::namespace_index)) == strings{"", "ns1", "ns2"});
  CHECK(ix.index_keys(ki::namespace_index, "nope").empty());
}

TEST_CASE("indexer: an index function may return several values", "[informer][indexer]") {
  ki::indexer<thing> ix(ki::default_key_func<thing>(), by_color());
  ix.add(make("ns", "a", "1", {"red", "blue"}));
  ix.add(make("ns", "b", "1", {"blue"}));
  ix.add(make("ns", "c", "1", {}));
  CHECK(sorted(ix.index_keys("color", "blue")) == strings{"ns/a", "ns/b"});
  CHECK(sorted(ix.index_keys("color", "red")) == strings{"ns/a"});
  CHECK(sorted(ix.list_index_values("color")) == strings{"blue", "red"});
  // index(): objects sharing any value with the probe, each once.
  CHECK(keys_of(ix.index("color", thing{"", "", "", {"red", "blue"}})) == strings{"ns/a", "ns/b"});
}

TEST_CASE("indexer: an update moves the object between index values", "[informer][indexer]") {
  ki::indexer<thing> ix(ki::default_key_func<thing>(), by_color());
  ix.add(make("ns", "a", "1", {"red", "blue"}));
  ix.update(make("ns", "a", "2", {"blue", "green"}));
  CHECK(ix.index_keys("color", "red").empty());
  CHECK(ix.index_keys("color", "blue") == strings{"ns/a"});
  CHECK(ix.index_keys("color", "green") == strings{"ns/a"});
  CHECK(sorted(ix.list_index_values("color")) == strings{"blue", "green"});
  REQUIRE(ix.by_index("color", "green").size() == 1);
  CHECK(ix.by_index("color", "green")[0]->rv == "2");
}

TEST_CASE("indexer: an update with the same index values serves the new object under them", "[informer][indexer]") {
  ki::indexer<thing> ix(ki::default_key_func<thing>(), by_color());
  ix.add(make("ns", "a", "1", {"red", "blue"}));
  ix.add(make("ns", "b", "1", {"red"}));
  ix.update(make("ns", "a", "2", {"red", "blue"}));  // unchanged: nothing moves
  ix.update(make("ns", "b", "2", {"red"}));
  ix.update(make("ns", "a", "3", {"blue", "red"}));  // the same values in another order
  CHECK(sorted(ix.index_keys("color", "red")) == strings{"ns/a", "ns/b"});
  CHECK(ix.index_keys("color", "blue") == strings{"ns/a"});
  CHECK(sorted(ix.list_index_values("color")) == strings{"blue", "red"});
  CHECK(ix.index_keys(ki::namespace_index, "ns").size() == 2);
  REQUIRE(ix.by_index("color", "blue").size() == 1);
  CHECK(ix.by_index("color", "blue")[0]->rv == "3");
  ix.remove(make("ns", "a"));
  ix.remove(make("ns", "b"));
  CHECK(ix.list_index_values("color").empty());
}

TEST_CASE("indexer: remove cleans every index", "[informer][indexer]") {
  ki::indexer<thing> ix(ki::default_key_func<thing>(), by_color());
  ix.add(make("ns", "a", "1", {"red"}));
  ix.add(make("ns", "b", "1", {"red"}));
  ix.remove(make("ns", "a"));
  CHECK(ix.index_keys("color", "red") == strings{"ns/b"});
  ix.remove(make("ns", "b"));
  CHECK(ix.list_index_values("color").empty());
  CHECK(ix.list_index_values(ki::namespace_index).empty());
}

TEST_CASE("indexer: indexers added after items exist are built from them", "[informer][indexer]") {
  ki::indexer<thing> ix;
  ix.add(make("ns", "a", "1", {"red"}));
  ix.add(make("ns", "b", "1", {"red", "blue"}));
  CHECK_THROWS_AS(ix.index_keys("color", "red"), std::invalid_argument);
  ix.add_indexers(by_color());
  CHECK(sorted(ix.index_keys("color", "red")) == strings{"ns/a", "ns/b"});
  CHECK(ix.index_keys("color", "blue") == strings{"ns/b"});
  // And kept up to date afterwards.
  ix.add(make("ns", "c", "1", {"blue"}));
  CHECK(sorted(ix.index_keys("color", "blue")) == strings{"ns/b", "ns/c"});
  // A name clash adds nothing.
  CHECK_THROWS_AS(ix.add_indexers(by_color()), std::invalid_argument);
  CHECK_THROWS_AS(ix.add_indexers({{std::string(ki::namespace_index), [](const thing&) { return strings{}; }}}),
                  std::invalid_argument);
}

TEST_CASE("indexer: replace swaps content and rebuilds indexes", "[informer][indexer]") {
  ki::indexer<thing> ix(ki::default_key_func<thing>(), by_color());
  ix.add(make("ns", "old", "1", {"red"}));
  ix.replace({make("ns2", "a", "1", {"blue"}), make("ns2", "b", "1", {"blue"})});
  CHECK(ix.get_by_key("ns/old") == nullptr);
  CHECK(ix.index_keys("color", "red").empty());
  CHECK(sorted(ix.index_keys("color", "blue")) == strings{"ns2/a", "ns2/b"});
  CHECK(ix.list_index_values(ki::namespace_index) == strings{"ns2"});
}

TEST_CASE("indexer: unknown index names are errors naming the index", "[informer][indexer]") {
  ki::indexer<thing> ix;
  try {
    (void)ix.by_index("bogus", "x");
    FAIL("expected an exception");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("\"bogus\"") != std::string::npos);
  }
  CHECK_THROWS_AS(ix.list_index_values("bogus"), std::invalid_argument);
}

TEST_CASE("indexer: a key-function failure leaves the cache unchanged", "[informer][indexer]") {
  ki::indexer<thing> ix([](const thing& t) -> std::string {
    if (t.nm.empty()) {
      throw std::invalid_argument("no name");
    }
    return t.nm;
  });
  ix.add(make("ns", "a"));
  CHECK_THROWS_AS(ix.add(make("ns", "")), std::invalid_argument);
  CHECK(ix.list_keys() == strings{"a"});
  CHECK(ix.index_keys(ki::namespace_index, "ns") == strings{"a"});
}
