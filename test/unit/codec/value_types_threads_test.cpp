// raw_json's shared texts and unknown_fields' shared members from several
// threads at once (tsan label: also built and run under ThreadSanitizer).
// Decoding a text that another thread is dropping must either share the
// live buffer or make a new one, never hand out a freed one.

#include "read_raw.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <thread>
#include <vector>

TEST_CASE("raw_json texts are shared and freed safely by threads decoding and dropping them", "[codegen][threads]") {
  const std::array<std::string, 3> texts{R"({"f:a":{}})", R"({"f:b":{"f:c":{}}})", R"({"f:d":{".":{}}})"};
  std::vector<std::thread> threads;
  std::array<int, 4> bad{};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<kube::raw_json> kept;
      for (int i = 0; i < 3000; ++i) {
        const auto& want = texts[static_cast<std::size_t>(i + t) % texts.size()];
        auto r = read_raw(want);
        if (r.text() != want) ++bad[static_cast<std::size_t>(t)];
        if (i % 7 == 0) kept.push_back(std::move(r));  // some outlive the loop turn
        if (kept.size() > 5) kept.erase(kept.begin());
      }
      for (const auto& k : kept) {
        if (k.text().empty()) ++bad[static_cast<std::size_t>(t)];
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad == std::array<int, 4>{});
}

TEST_CASE("unknown_fields shared by threads: each copy written alone leaves the others as they were",
          "[codegen][threads]") {
  kube::unknown_fields shared;
  shared.set("x", 1);
  std::vector<std::thread> threads;
  std::array<int, 4> bad{};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        kube::unknown_fields mine = shared;  // const access to `shared` from every thread
        mine.set("t", t);
        if (mine.size() != 2 || *mine.find("t") != t) ++bad[static_cast<std::size_t>(t)];
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad == std::array<int, 4>{});
  CHECK(shared.size() == 1);
}
