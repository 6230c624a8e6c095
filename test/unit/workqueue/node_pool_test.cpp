// The queue's node storage and index (detail): ids name the right node while
// slabs come and go and their numbers are reused, and the index finds every
// node through them.

#include <kube/workqueue/detail/flat_index.hpp>
#include <kube/workqueue/detail/node_pool.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

namespace detail = kube::workqueue::detail;

namespace {

struct test_node {
  explicit test_node(std::uint64_t v)
      : value(v) {}
  std::uint64_t value;
  std::uint32_t id = 0;
  unsigned char pad[48]{};  // 64 bytes, as the queue's std::string node
};
static_assert(sizeof(test_node) == 64);

// A hash that puts many values in few home slots, so probes run on.
std::size_t hash_of(std::uint64_t v) { return static_cast<std::size_t>((v % 97) * 0x9E3779B9u + (v >> 7)); }

}  // namespace

TEST_CASE("node_pool: ids resolve to their nodes while slabs are released and their numbers reused",
          "[workqueue][node_pool]") {
  detail::node_pool<test_node> pool;
  std::vector<test_node*> live;
  std::set<std::uint32_t> numbers_first;
  for (std::uint64_t v = 0; v < 100000; ++v) {
    test_node* n = pool.create(v);
    REQUIRE(n->id != 0);
    numbers_first.insert(n->id >> 16);
    live.push_back(n);
  }
  REQUIRE(numbers_first.size() > 4);  // several slabs
  for (test_node* n : live) REQUIRE(pool.node(n->id) == n);

  // Free all but the last 100: every slab but the newest goes back to the
  // system (each is empty and not the only one with room).
  std::vector<test_node*> kept(live.end() - 100, live.end());
  for (auto it = live.begin(); it != live.end() - 100; ++it) pool.destroy(*it);
  live = kept;

  // New nodes come from slabs whose numbers are reused, at other addresses.
  std::set<std::uint32_t> ids;
  std::set<std::uint32_t> numbers_second;
  for (test_node* n : live) ids.insert(n->id);
  for (std::uint64_t v = 100000; v < 200000; ++v) {
    test_node* n = pool.create(v);
    REQUIRE(ids.insert(n->id).second);  // unique among live nodes
    numbers_second.insert(n->id >> 16);
    live.push_back(n);
  }
  CHECK(*numbers_second.rbegin() <= *numbers_first.rbegin());  // freed numbers reused, no new ones
  for (test_node* n : live) {
    REQUIRE(pool.node(n->id) == n);
  }

  // The index finds each node by value through its id, and erases exactly.
  detail::flat_index<test_node> index(pool);
  for (test_node* n : live) index.insert(n, hash_of(n->value));
  auto find = [&](std::uint64_t v) { return index.find(hash_of(v), [v](const test_node& n) { return n.value == v; }); };
  for (test_node* n : live) REQUIRE(find(n->value) == n);
  for (std::size_t i = 0; i < live.size(); i += 2) index.erase(live[i], hash_of(live[i]->value));
  CHECK(index.size() == live.size() / 2);
  for (std::size_t i = 0; i < live.size(); ++i) {
    REQUIRE(find(live[i]->value) == (i % 2 == 0 ? nullptr : live[i]));
  }
  // find_or_insert: a value present is found (nothing added); a new one
  // is added where its probe ended.
  test_node* odd = live[1];
  test_node* twin = pool.create(odd->value);
  CHECK(index.find_or_insert(twin, hash_of(odd->value), [&](const test_node& n) { return n.value == odd->value; }) ==
        odd);
  CHECK(index.size() == live.size() / 2);
  pool.destroy(twin);
  test_node* fresh = pool.create(std::uint64_t{777777});
  CHECK(index.find_or_insert(fresh, hash_of(777777), [](const test_node& n) { return n.value == 777777; }) == nullptr);
  CHECK(find(777777) == fresh);
  index.erase(fresh, hash_of(777777));
  pool.destroy(fresh);
  CHECK(find(777777) == nullptr);
  std::size_t visited = 0;
  index.for_each([&](test_node* n) {
    ++visited;
    CHECK(pool.node(n->id) == n);
  });
  CHECK(visited == live.size() / 2);
  for (test_node* n : live) pool.destroy(n);
}

namespace {
struct wide_node {
  explicit wide_node(std::uint64_t v)
      : value(v) {}
  std::uint64_t value;
  std::uint32_t id = 0;
  unsigned char pad[60]{};  // 72 bytes: a full slab leaves some of its huge page over
};
static_assert(sizeof(wide_node) == 72);
}  // namespace

TEST_CASE("node_pool: nodes of a size that does not divide the huge page still resolve by id",
          "[workqueue][node_pool]") {
  detail::node_pool<wide_node> pool;
  std::vector<wide_node*> live;
  for (std::uint64_t v = 0; v < 70000; ++v) live.push_back(pool.create(v));
  std::set<std::uint32_t> ids;
  for (std::size_t i = 0; i < live.size(); ++i) {
    REQUIRE(pool.node(live[i]->id) == live[i]);
    REQUIRE(pool.node(live[i]->id)->value == i);
    ids.insert(live[i]->id);
  }
  CHECK(ids.size() == live.size());
  for (wide_node* n : live) pool.destroy(n);
}
