// DeltaFIFO rules, one test per rule (client-go delta_fifo.go semantics).
#include "test_object.hpp"

#include <kube/informer/delta_fifo.hpp>
#include <kube/informer/indexer.hpp>
#include <kube/dynamic/unstructured.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace ki = kube::informer;
using ki::delta_type;
using ki::test::make;
using ki::test::thing;

namespace {

std::vector<delta_type> types(const ki::delta_list<thing>& dl) {
  std::vector<delta_type> out;
  for (const auto& d : dl.deltas) {
    out.push_back(d.type);
  }
  return out;
}

std::vector<std::string> pop_keys(ki::delta_fifo<thing>& f) {
  std::vector<std::string> out;
  while (auto dl = f.try_pop()) {
    out.push_back(dl->key);
  }
  return out;
}

}  // namespace

TEST_CASE("delta_fifo: keys are namespace/name, name alone when cluster-scoped", "[informer][delta_fifo]") {
  CHECK(ki::meta_namespace_key("ns", "a") == "ns/a");
  CHECK(ki::meta_namespace_key("", "node-1") == "node-1");
  kube::unstructured u;
  u.set_namespace("default").set_name("cm");
  CHECK(ki::meta_namespace_key(u) == "default/cm");
  kube::unstructured node;
  node.set_name("n1");
  CHECK(ki::meta_namespace_key(node) == "n1");

  struct plain {
    std::string a, b;
  };
  auto kf = ki::make_namespace_key_func<plain>(&plain::a, &plain::b);
  CHECK(kf(plain{"x", "y"}) == "x/y");
  CHECK(kf(plain{"", "y"}) == "y");

  ki::delta_fifo<kube::unstructured> f;
  f.add(std::make_shared<const kube::unstructured>(u));
  REQUIRE(f.list_keys() == std::vector<std::string>{"default/cm"});
}

TEST_CASE("delta_fifo: deltas of one key accumulate in order - pop hands out the whole list",
          "[informer][delta_fifo]") {
  ki::delta_fifo<thing> f;
  f.add(make("ns", "a", "1"));
  f.update(make("ns", "a", "2"));
  f.update(make("ns", "a", "3"));
  REQUIRE(f.size() == 1);
  auto dl = f.try_pop();
  REQUIRE(dl);
  CHECK(dl->key == "ns/a");
  CHECK(types(*dl) == std::vector{delta_type::added, delta_type::updated, delta_type::updated});
  CHECK(dl->deltas.back().obj()->rv == "3");
  CHECK(f.empty());
  CHECK_FALSE(f.try_pop());
}

TEST_CASE("delta_fifo: a busy key keeps its place and does not starve others", "[informer][delta_fifo]") {
  ki::delta_fifo<thing> f;
  f.add(make("ns", "a"));
  f.add(make("ns", "b"));
  for (int i = 0; i < 100; ++i) {
    f.update(make("ns", "a", std::to_string(i)));
  }
  f.add(make("ns", "c"));
  auto first = f.try_pop();
  REQUIRE(first);
  CHECK(first->key == "ns/a");
  CHECK(first->deltas.size() == 101);
  // a comes back, but behind b and c.
  f.update(make("ns", "a", "x"));
  CHECK(pop_keys(f) == std::vector<std::string>{"ns/b", "ns/c", "ns/a"});
}

TEST_CASE("delta_fifo: delete of a key neither queued nor known is dropped", "[informer][delta_fifo]") {
  SECTION("without a store") {
    ki::delta_fifo<thing> f;
    f.remove(make("ns", "ghost"));
    CHECK(f.empty());
    CHECK_FALSE(f.has_synced());  // a dropped delete does not populate
  }
  SECTION("with a store") {
    ki::indexer<thing> store;
    ki::delta_fifo<thing> f(ki::default_key_func<thing>(), &store);
    f.remove(make("ns", "ghost"));
    CHECK(f.empty());
    store.add(make("ns", "known", "7"));
    f.remove(make("ns", "known", "8"));
    REQUIRE(f.size() == 1);
    auto dl = f.try_pop();
    REQUIRE(dl);
    CHECK(types(*dl) == std::vector{delta_type::deleted});
    CHECK(dl->deltas[0].obj()->rv == "8");
  }
  SECTION("queued key without a store") {
    ki::delta_fifo<thing> f;
    f.add(make("ns", "a"));
    f.remove(make("ns", "a", "2"));
    auto dl = f.try_pop();
    REQUIRE(dl);
    CHECK(types(*dl) == std::vector{delta_type::added, delta_type::deleted});
  }
}

TEST_CASE("delta_fifo: two consecutive deletes collapse, keeping the one with more information",
          "[informer][delta_fifo]") {
  SECTION("two real deletes: the newer one wins") {
    ki::delta_fifo<thing> f;
    f.add(make("ns", "a", "1"));
    f.remove(make("ns", "a", "2"));
    f.remove(make("ns", "a", "3"));
    auto dl = f.try_pop();
    REQUIRE(dl);
    CHECK(types(*dl) == std::vector{delta_type::added, delta_type::deleted});
    CHECK(dl->deltas[1].tombstone() == nullptr);
    CHECK(dl->deltas[1].obj()->rv == "3");
  }
  SECTION("a tombstone after a real delete: the real delete stays") {
    ki::delta_fifo<thing> f;
    f.add(make("ns", "a", "1"));
    f.remove(make("ns", "a", "2"));
    f.replace({}, "10");  // a vanished: tombstone queued behind the delete
    auto dl = f.try_pop();
    REQUIRE(dl);
    CHECK(types(*dl) == std::vector{delta_type::added, delta_type::deleted});
    CHECK(dl->deltas[1].tombstone() == nullptr);
    CHECK(dl->deltas[1].obj()->rv == "2");
  }
  SECTION("a real delete after a tombstone: the real delete replaces it") {
    ki::indexer<thing> store;
    store.add(make("ns", "a", "1"));
    ki::delta_fifo<thing> f(ki::default_key_func<thing>(), &store);
    f.replace({}, "10");
    f.remove(make("ns", "a", "5"));
    auto dl = f.try_pop();
    REQUIRE(dl);
    REQUIRE(dl->deltas.size() == 1);
    CHECK(dl->deltas[0].type == delta_type::deleted);
    CHECK(dl->deltas[0].tombstone() == nullptr);
    CHECK(dl->deltas[0].obj()->rv == "5");
  }
  SECTION("deletes separated by an add are not collapsed") {
    ki::delta_fifo<thing> f;
    f.add(make("ns", "a", "1"));
    f.remove(make("ns", "a", "2"));
    f.add(make("ns", "a", "3"));
    f.remove(make("ns", "a", "4"));
    auto dl = f.try_pop();
    REQUIRE(dl);
    CHECK(types(*dl) == std::vector{delta_type::added, delta_type::deleted, delta_type::added, delta_type::deleted});
  }
}

TEST_CASE("delta_fifo: replace queues Replaced for listed objects and records the resource version",
          "[informer][delta_fifo]") {
  ki::delta_fifo<thing> f;
  f.replace({make("ns", "a"), make("", "b")}, "42");
  CHECK(f.last_sync_resource_version() == "42");
  CHECK(f.list_keys() == std::vector<std::string>{"ns/a", "b"});
  auto dl = f.try_pop();
  REQUIRE(dl);
  CHECK(types(*dl) == std::vector{delta_type::replaced});
}

TEST_CASE("delta_fifo: relist tombstones carry the last known object from the queue", "[informer][delta_fifo]") {
  ki::delta_fifo<thing> f;
  f.add(make("ns", "gone", "1"));
  f.update(make("ns", "gone", "2"));
  f.add(make("ns", "stays", "1"));
  f.replace({make("ns", "stays", "3")}, "50");

  auto gone = f.find("ns/gone");
  REQUIRE(gone);
  REQUIRE(gone->size() == 3);
  const auto& last = gone->back();
  CHECK(last.type == delta_type::deleted);
  const auto* ts = last.tombstone();
  REQUIRE(ts);
  CHECK(ts->key == "ns/gone");
  REQUIRE(ts->obj);
  CHECK(ts->obj->rv == "2");  // the newest queued state

  auto stays = f.find("ns/stays");
  REQUIRE(stays);
  CHECK(stays->back().type == delta_type::replaced);
  CHECK(stays->back().obj()->rv == "3");
}

TEST_CASE("delta_fifo: relist tombstones carry the last known object from the store", "[informer][delta_fifo]") {
  ki::indexer<thing> store;
  store.add(make("ns", "cached-gone", "7"));
  store.add(make("ns", "cached-stays", "7"));
  store.add(make("ns", "cached-and-queued", "7"));
  ki::delta_fifo<thing> f(ki::default_key_func<thing>(), &store);
  f.update(make("ns", "cached-and-queued", "8"));

  f.replace({make("ns", "cached-stays", "9")}, "60");

  auto gone = f.find("ns/cached-gone");
  REQUIRE(gone);
  REQUIRE(gone->size() == 1);
  const auto* ts = gone->front().tombstone();
  REQUIRE(ts);
  CHECK(ts->key == "ns/cached-gone");
  REQUIRE(ts->obj);
  CHECK(ts->obj->rv == "7");

  // Queued and cached: the queue has the newer state, and only one tombstone.
  auto both = f.find("ns/cached-and-queued");
  REQUIRE(both);
  REQUIRE(both->size() == 2);
  REQUIRE(both->back().tombstone());
  CHECK(both->back().tombstone()->obj->rv == "8");

  CHECK(f.find("ns/cached-stays")->back().type == delta_type::replaced);
  CHECK(f.size() == 3);
}

TEST_CASE("delta_fifo: a tombstone of a tombstone unwraps the object", "[informer][delta_fifo]") {
  ki::indexer<thing> store;
  store.add(make("ns", "a", "7"));
  ki::delta_fifo<thing> f(ki::default_key_func<thing>(), &store);
  f.replace({}, "1");
  f.replace({}, "2");
  auto dl = f.try_pop();
  REQUIRE(dl);
  REQUIRE(dl->deltas.size() == 1);  // the second tombstone deduplicated
  REQUIRE(dl->deltas[0].tombstone());
  CHECK(dl->deltas[0].tombstone()->obj->rv == "7");
}

TEST_CASE("delta_fifo: resync queues Sync only for known keys with nothing queued", "[informer][delta_fifo]") {
  ki::indexer<thing> store;
  store.add(make("ns", "idle", "1"));
  store.add(make("ns", "busy", "1"));
  ki::delta_fifo<thing> f(ki::default_key_func<thing>(), &store);
  f.update(make("ns", "busy", "2"));
  f.resync();

  auto busy = f.find("ns/busy");
  REQUIRE(busy);
  REQUIRE(busy->size() == 1);
  CHECK(busy->front().type == delta_type::updated);

  auto idle = f.find("ns/idle");
  REQUIRE(idle);
  REQUIRE(idle->size() == 1);
  CHECK(idle->front().type == delta_type::sync);
  CHECK(idle->front().obj()->rv == "1");

  SECTION("without a store resync does nothing") {
    ki::delta_fifo<thing> bare;
    bare.resync();
    CHECK(bare.empty());
  }
}

TEST_CASE("delta_fifo: has_synced after the first replace's items are all popped", "[informer][delta_fifo]") {
  ki::indexer<thing> store;
  store.add(make("ns", "old", "1"));
  ki::delta_fifo<thing> f(ki::default_key_func<thing>(), &store);
  CHECK_FALSE(f.has_synced());
  f.replace({make("ns", "a"), make("ns", "b")}, "5");  // + tombstone for ns/old = 3 keys
  CHECK_FALSE(f.has_synced());
  // Events arriving after the list do not extend the initial population.
  f.add(make("ns", "c"));
  auto p1 = f.try_pop();
  REQUIRE(p1);
  CHECK(p1->is_in_initial_list);
  CHECK_FALSE(f.has_synced());
  auto p2 = f.try_pop();
  REQUIRE(p2);
  CHECK(p2->is_in_initial_list);
  CHECK_FALSE(f.has_synced());
  auto p3 = f.try_pop();
  REQUIRE(p3);
  CHECK(p3->key == "ns/old");
  CHECK(p3->is_in_initial_list);
  CHECK(f.has_synced());
  CHECK(f.size() == 1);
  auto p4 = f.try_pop();
  REQUIRE(p4);
  CHECK_FALSE(p4->is_in_initial_list);

  SECTION("a second replace does not unsync") {
    f.replace({make("ns", "d")}, "6");
    CHECK(f.has_synced());
  }
}

TEST_CASE("delta_fifo: an add before any replace makes it synced at once", "[informer][delta_fifo]") {
  ki::delta_fifo<thing> f;
  f.add(make("ns", "a"));
  CHECK(f.has_synced());
  f.replace({make("ns", "b")}, "1");
  CHECK(f.has_synced());
}

TEST_CASE("delta_fifo: an empty first replace is synced at once", "[informer][delta_fifo]") {
  ki::delta_fifo<thing> f;
  f.replace({}, "1");
  CHECK(f.has_synced());
  CHECK(f.empty());
}

TEST_CASE("delta_fifo: a type without metadata needs a key function", "[informer][delta_fifo]") {
  struct bare {
    int id;
  };
  CHECK_THROWS_AS(ki::delta_fifo<bare>(), std::invalid_argument);
  ki::delta_fifo<bare> f([](const bare& b) { return std::to_string(b.id); });
  f.add(std::make_shared<const bare>(bare{3}));
  CHECK(f.list_keys() == std::vector<std::string>{"3"});
  CHECK_THROWS_AS(f.add(nullptr), std::invalid_argument);
}

TEST_CASE("delta_fifo: unstructured objects feed an indexer with default keys (the guide's example)",
          "[informer][delta_fifo]") {
  ki::indexer<kube::unstructured> cache({}, {
                                                {"by-app",
                                                 [](const kube::unstructured& u) {
                                                   auto l = u.labels();
                                                   auto it = l.find("app");
                                                   return it == l.end() ? std::vector<std::string>{}
                                                                        : std::vector{it->second};
                                                 }},
                                            });
  ki::delta_fifo<kube::unstructured> fifo({}, &cache);
  kube::unstructured web;
  web.set_namespace("default").set_name("web").set_label("app", "web");
  kube::unstructured db;
  db.set_namespace("other").set_name("db").set_label("app", "db");
  fifo.replace({std::make_shared<const kube::unstructured>(web), std::make_shared<const kube::unstructured>(db)}, "3");
  while (auto dl = fifo.try_pop()) {
    for (const auto& d : dl->deltas) {
      if (d.type == delta_type::deleted) {
        cache.remove_by_key(dl->key);
      } else {
        cache.update(d.obj());
      }
    }
  }
  CHECK(fifo.has_synced());
  CHECK(cache.index_keys("by-app", "web") == std::vector<std::string>{"default/web"});
  REQUIRE(cache.by_index(ki::namespace_index, "other").size() == 1);
  CHECK(cache.by_index(ki::namespace_index, "other")[0]->name() == "db");

  fifo.replace({std::make_shared<const kube::unstructured>(web)}, "4");  // db vanished
  auto dl = fifo.try_pop();
  REQUIRE(dl);
  if (dl->key != "other/db") {
    dl = fifo.try_pop();
    REQUIRE(dl);
  }
  CHECK(dl->key == "other/db");
  REQUIRE(dl->deltas.back().tombstone());
  CHECK(dl->deltas.back().obj()->name() == "db");
}
