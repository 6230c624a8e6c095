// Reader threads vs. the owner thread writing the Indexer. Labelled tsan: the
// shared_mutex must make every read race-free and every answer consistent.
#include "test_object.hpp"

#include <kube/informer/indexer.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace ki = kube::informer;
using ki::test::make;
using ki::test::thing;

TEST_CASE("indexer threads: 2 readers see consistent objects while the owner writes", "[informer][indexer][threads]") {
  ki::indexer<thing> ix(ki::default_key_func<thing>(), {{"color", [](const thing& t) { return t.colors; }}});
  constexpr int keys = 32;
  constexpr int rounds = 3000;
  std::atomic<bool> stop{false};
  std::atomic<long> inconsistent{0};
  std::atomic<long> reads{0};

  auto reader = [&](int seed) {
    const std::vector<std::string> colors{"red", "blue", "green"};
    int i = seed;
    while (!stop.load(std::memory_order_acquire)) {
      ++i;
      const auto& color = colors[static_cast<std::size_t>(i) % colors.size()];
      for (const auto& o : ix.by_index("color", color)) {
        // An object listed under a value must carry that value.
        if (std::find(o->colors.begin(), o->colors.end(), color) == o->colors.end()) {
          inconsistent.fetch_add(1);
        }
      }
      auto key = "ns/k" + std::to_string(i % keys);
      if (auto o = ix.get_by_key(key); o && ki::meta_namespace_key(*o) != key) {
        inconsistent.fetch_add(1);
      }
      for (const auto& k : ix.index_keys(ki::namespace_index, "ns")) {
        if (k.rfind("ns/", 0) != 0) {
          inconsistent.fetch_add(1);
        }
      }
      reads.fetch_add(1, std::memory_order_relaxed);
    }
  };

  std::thread r1(reader, 0);
  std::thread r2(reader, 1);
  for (int round = 0; round < rounds; ++round) {
    const int k = round % keys;
    const auto name = "k" + std::to_string(k);
    switch (round % 3) {
    case 0:
      ix.add(make("ns", name, std::to_string(round), {"red", "blue"}));
      break;
    case 1:
      ix.update(make("ns", name, std::to_string(round), {"green"}));
      break;
    default:
      ix.remove(make("ns", name));
      break;
    }
  }
  // Keep writing until both readers have demonstrably overlapped with writes.
  while (reads.load(std::memory_order_relaxed) < 1000) {
    ix.add(make("ns", "k0", "x", {"red"}));
    ix.remove_by_key("ns/k0");
  }
  stop.store(true, std::memory_order_release);
  r1.join();
  r2.join();

  CHECK(inconsistent.load() == 0);
  CHECK(reads.load() >= 1000);
  // Final state is what the owner wrote: rounds cycle add/update/remove.
  for (const auto& k : ix.list_keys()) {
    auto o = ix.get_by_key(k);
    REQUIRE(o);
    for (const auto& c : o->colors) {
      auto ks = ix.index_keys("color", c);
      CHECK(std::find(ks.begin(), ks.end(), k) != ks.end());
    }
  }
}
