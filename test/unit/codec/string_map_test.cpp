// kube::string_map: std::map's behaviour over a sorted vector, checked
// against std::map itself, and its decoding from JSON (DOM and text reader).

#include <kube/codec/codec_impl.hpp>
#include <kube/codec/string_map.hpp>

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

using smap = kube::string_map<std::string>;

template <class M>
void same_entries(const smap& got, const M& want) {
  REQUIRE(got.size() == want.size());
  auto w = want.begin();
  for (const auto& [k, v] : got) {
    CHECK(k == w->first);
    CHECK(v == w->second);
    ++w;
  }
}

template <class T>
kube::string_map<T> read_text(std::string_view text) {
  kube::string_map<T> out;
  kube::codec::read_text(
      text,
      [](kube::codec::json_reader& in, void* o, const kube::json_path& at) {
        kube::codec::read_into(in, *static_cast<kube::string_map<T>*>(o), at);
      },
      &out);
  return out;
}

template <class T>
kube::string_map<T> read_dom(std::string_view text) {
  kube::string_map<T> out;
  kube::codec::decode_into(boost::json::parse(text), out, kube::json_path{});
  return out;
}

}  // namespace

TEST_CASE("string_map: every operation leaves the entries std::map would have", "[codegen]") {
  std::mt19937 rng(20261201);
  std::map<std::string, std::string> model;
  smap m;
  const auto key = [&] {
    // Few distinct keys, so inserts hit existing ones and erases find them.
    std::string k(1 + rng() % 3, 'a');
    for (auto& c : k) c = static_cast<char>('a' + rng() % 4);
    return k;
  };
  for (int step = 0; step < 20000; ++step) {
    const std::string k = key();
    const std::string v = std::to_string(step);
    INFO("step " << step << " key " << k);
    switch (rng() % 8) {
    case 0: {
      const auto a = m.try_emplace(k, v);
      const auto b = model.try_emplace(k, v);
      CHECK(a.second == b.second);
      CHECK(a.first->second == b.first->second);
      break;
    }
    case 1: {
      const auto a = m.insert_or_assign(k, v);
      const auto b = model.insert_or_assign(k, v);
      CHECK(a.second == b.second);
      break;
    }
    case 2:
      m[k] += v;
      model[k] += v;
      break;
    case 3:
      CHECK(m.erase(k) == model.erase(k));
      break;
    case 4: {
      const auto a = m.insert({k, v});
      const auto b = model.insert({k, v});
      CHECK(a.second == b.second);
      break;
    }
    case 5: {
      auto it = m.find(k);
      CHECK((it == m.end()) == (model.find(k) == model.end()));
      CHECK(m.contains(std::string_view(k)) == model.contains(k));
      CHECK(m.count(k.c_str()) == model.count(k));
      if (it != m.end()) {
        CHECK(it->second == model.at(k));
        CHECK(m.at(k) == model.at(k));
        it = m.erase(it);
        auto mit = model.erase(model.find(k));
        CHECK((it == m.end()) == (mit == model.end()));
        if (it != m.end()) CHECK(it->first == mit->first);
      }
      break;
    }
    case 6:
      CHECK(m.emplace(k, v).second == model.emplace(k, v).second);
      break;
    case 7:
      if (rng() % 50 == 0) {
        m.clear();
        model.clear();
      }
      break;
    }
    same_entries(m, model);
  }
}

TEST_CASE("string_map: construction, conversion from std::map, lookups, errors", "[codegen]") {
  // As std::map's constructor: the first of two equal keys is kept.
  const smap init{{"b", "2"}, {"a", "1"}, {"b", "dup"}, {"c", "3"}};
  same_entries(init, std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}, {"c", "3"}});

  const std::map<std::string, std::string> std_map{{"x", "1"}, {"app", "web"}};
  smap converted = std_map;
  same_entries(converted, std_map);
  CHECK(converted == std_map);  // compares through the conversion
  CHECK_FALSE(converted == init);

  std::optional<smap> labels;
  labels = std::map<std::string, std::string>{{"app", "db"}};
  REQUIRE(labels);
  CHECK(labels->at("app") == "db");
  CHECK(labels.value_or(smap{}).size() == 1);

  const std::string_view sv = "app";
  CHECK(converted.find(sv)->second == "web");
  CHECK(converted.find("nope") == converted.end());
  CHECK(converted.lower_bound("b")->first == "x");
  CHECK_THROWS_WITH(converted.at("missing-key"), "kube::string_map: no key \"missing-key\"");
  CHECK_THROWS_AS(init.at(""), std::out_of_range);

  std::string moved = std::string(40, 'k');
  converted.try_emplace(std::move(moved), "v");
  CHECK(converted.contains(std::string(40, 'k')));

  std::vector<std::pair<std::string, std::string>> reversed{{"z", "1"}, {"y", "2"}, {"x", "3"}};
  const smap from_range(reversed.begin(), reversed.end());
  CHECK(from_range.begin()->first == "x");
  CHECK(from_range.rbegin()->first == "z");
}

TEST_CASE("string_map decodes like std::map, from the DOM and from the text", "[codegen]") {
  // Sorted keys (as the API server writes them), unsorted ones, and a
  // repeated key (the last value wins in every decoder).
  for (const std::string_view text : {R"({"a":"1","b":"2","c":"3"})", R"({"c":"3","a":"1","b":"2"})",
                                      R"({"b":"x","a":"1","b":"2","c":"3"})", R"({})"}) {
    INFO(text);
    std::map<std::string, std::string> want;
    kube::codec::decode_into(boost::json::parse(text), want, kube::json_path{});
    const auto dom = read_dom<std::string>(text);
    const auto txt = read_text<std::string>(text);
    same_entries(dom, want);
    same_entries(txt, want);
    // Decoded maps are kept in caches: no growth slack.
    CHECK(dom.capacity() == dom.size());
    CHECK(txt.capacity() == txt.size());
  }
  // Values of other types, and null.
  const auto nested = read_text<std::vector<std::int32_t>>(R"({"x":[1,2],"a":[]})");
  REQUIRE(nested.size() == 2);
  CHECK(nested.at("x") == std::vector<std::int32_t>{1, 2});
  CHECK(read_text<std::string>("null").empty());
  CHECK(read_dom<std::string>("null").empty());

  // Errors name the member.
  CHECK_THROWS_WITH(read_dom<std::vector<std::int32_t>>(R"({"x":[1,"2"]})"),
                    ".x[1]: expected a 32-bit integer, got a string");
  CHECK_THROWS_WITH(read_text<std::vector<std::int32_t>>(R"({"x":[1,"2"]})"),
                    ".x[1]: expected a 32-bit integer, got a string");
  CHECK_THROWS_WITH(read_text<std::string>(R"(["a"])"), Catch::Contains("expected an object"));

  // Encoding writes every entry back.
  smap m{{"b", "2"}, {"a", "1"}};
  boost::json::value v;
  kube::codec::encode_from(m, v);
  CHECK(boost::json::serialize(v) == R"({"a":"1","b":"2"})");
}
