#include <kube/codec/codec_impl.hpp>
#include <kube/codec/value_types.hpp>

#include "read_raw.hpp"

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <optional>
#include <string>

using namespace std::chrono;

TEST_CASE("quantity: the grammar and client-go's rounding", "[codegen]") {
  CHECK(kube::quantity("100m").milli_value() == 100);
  CHECK(kube::quantity("1").milli_value() == 1000);
  CHECK(kube::quantity("1.5Gi").value() == 1610612736);
  CHECK(kube::quantity("1Ki").value() == 1024);
  CHECK(kube::quantity("2k").value() == 2000);
  CHECK(kube::quantity("1e3").value() == 1000);
  CHECK(kube::quantity("1E-3").milli_value() == 1);
  CHECK(kube::quantity("1500m").value() == 2);  // rounds up
  CHECK(kube::quantity("-1500m").value() == -1);
  CHECK(kube::quantity(".5").milli_value() == 500);
  CHECK(kube::quantity("100n").milli_value() == 1);  // rounds up
  CHECK(kube::quantity("1Gi").compare(kube::quantity("1024Mi")) == 0);
  CHECK(kube::quantity("1").compare(kube::quantity("999m")) > 0);
  for (const char* bad : {"", "m", "1.2.3", "1KB", "1ki", "e3", "1e", "abc", "1 m", "--1"}) {
    INFO(bad);
    CHECK_FALSE(kube::quantity::valid(bad));
    CHECK_THROWS_AS(kube::quantity(bad), std::invalid_argument);
  }
}

TEST_CASE("timestamps parse RFC 3339 and print Kubernetes' forms", "[codegen]") {
  auto t = kube::timestamp::parse("2024-05-01T10:20:30Z");
  REQUIRE(t);
  CHECK(t->to_string() == "2024-05-01T10:20:30Z");
  CHECK(t->time() == sys_days(2024y / May / 1) + 10h + 20min + 30s);
  auto off = kube::timestamp::parse("2024-05-01T12:20:30.5+02:00");
  REQUIRE(off);
  CHECK(off->to_micro_string() == "2024-05-01T10:20:30.500000Z");
  CHECK(off->to_string() == "2024-05-01T10:20:30Z");
  auto micro = kube::timestamp::parse("2024-02-29T23:59:59.123456Z");
  REQUIRE(micro);
  CHECK(micro->to_micro_string() == "2024-02-29T23:59:59.123456Z");
  for (const char* bad : {"", "2024-05-01", "2024-05-01T10:20:30", "2024-13-01T10:20:30Z", "2023-02-29T10:20:30Z",
                          "2024-05-01T10:20:30.Z", "2024-05-01T10:20:30Zjunk", "2024-05-01 10:20:30Z"}) {
    INFO(bad);
    CHECK_FALSE(kube::timestamp::parse(bad));
  }
}

TEST_CASE("int_or_string scales percentages like client-go", "[codegen]") {
  CHECK(kube::int_or_string(3).scaled_value(10, true) == 3);
  CHECK(kube::int_or_string("25%").scaled_value(10, true) == 3);
  CHECK(kube::int_or_string("25%").scaled_value(10, false) == 2);
  CHECK_FALSE(kube::int_or_string("25").scaled_value(10, false));
  CHECK_FALSE(kube::int_or_string("x%").scaled_value(10, false));
  // Found by fuzzing: a result beyond 64 bits is no value, not undefined behaviour.
  CHECK_FALSE(kube::int_or_string("99999999999999%").scaled_value(std::int64_t{1} << 62, true));
  CHECK(kube::int_or_string("100%").scaled_value(std::int64_t{1} << 62, true) == std::int64_t{1} << 62);
  CHECK(kube::int_or_string("http").to_string() == "http");
  CHECK(kube::int_or_string(8080).to_string() == "8080");
}

TEST_CASE("bytes travel as base64 - bad base64 is an error with the path", "[codegen]") {
  boost::json::value v;
  kube::codec::encode(kube::bytes(std::string("\x00\x01\xff", 3)), v);
  CHECK(v.as_string() == "AAH/");
  kube::bytes b;
  const kube::json_path root{};
  const kube::json_path field{&root, "data"};
  kube::codec::decode(boost::json::value("aGVsbG8="), b, field);
  CHECK(b.str() == "hello");
  CHECK_THROWS_WITH(kube::codec::decode(boost::json::value("a$=="), b, field),
                    Catch::Contains(".data: not valid base64"));
}

TEST_CASE("containers decode null as absent/empty and report element paths", "[codegen]") {
  const kube::json_path root{};
  std::optional<std::vector<std::string>> list;
  kube::codec::decode_into(boost::json::parse("null"), list, root);
  CHECK_FALSE(list);
  kube::codec::decode_into(boost::json::parse(R"(["a","b"])"), list, root);
  CHECK(list == std::vector<std::string>{"a", "b"});
  std::map<std::string, std::vector<std::int32_t>> m;
  CHECK_THROWS_WITH(kube::codec::decode_into(boost::json::parse(R"({"x":[1,"2"]})"), m, root),
                    ".x[1]: expected a 32-bit integer, got a string");
  std::int64_t i = 0;
  kube::codec::decode(boost::json::parse("3.0"), i, root);
  CHECK(i == 3);
  CHECK_THROWS(kube::codec::decode(boost::json::parse("3.5"), i, root));
}

TEST_CASE("unknown_fields copies share until written", "[codegen]") {
  kube::unknown_fields a;
  a.set("x", 1);
  kube::unknown_fields b = a;
  b.set("y", 2);
  CHECK(a.size() == 1);
  CHECK(b.size() == 2);
  CHECK_FALSE(a == b);
  b.erase("y");
  CHECK(a == b);
}

TEST_CASE("raw_json values with equal text share one buffer, freed with the last of them", "[codegen]") {
  const std::string fields = R"({"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{}}})";
  auto a = read_raw(fields);
  auto b = read_raw(fields);
  CHECK(a.text() == fields);
  CHECK(a.text().data() == b.text().data());  // one buffer
  // Pretty-printed text is made compact first: the same buffer again.
  const auto c =
      read_raw("{ \"f:metadata\": {\"f:labels\": {\".\": {}, \"f:app\": {}}}, \"f:spec\": {\"f:containers\": {}}}");
  CHECK(c.text().data() == a.text().data());
  // Built from a DOM value: shared too.
  const kube::raw_json d(boost::json::parse(fields));
  CHECK(d.text().data() == a.text().data());
  // Other text, another buffer.
  const auto e = read_raw(R"({"f:data":{}})");
  CHECK(e.text() == R"({"f:data":{}})");
  CHECK(e.text().data() != a.text().data());
  // Changing one does not change the others.
  b.set(boost::json::parse(R"({"x":1})"));
  CHECK(a.text() == fields);
  CHECK(b.text() == R"({"x":1})");
  // When every holder is gone the text is freed (ASan reports a leak or a
  // use after free otherwise) and a later decode starts afresh.
  a = {};
  const kube::raw_json keep_c = c;
  CHECK(keep_c.text() == fields);
  {
    const auto only = read_raw(R"({"f:once":{}})");
    CHECK(only.text() == R"({"f:once":{}})");
  }
  CHECK(read_raw(R"({"f:once":{}})").text() == R"({"f:once":{}})");
}

TEST_CASE("unknown_fields: copies, moves and assignments each keep their own members", "[codegen]") {
  kube::unknown_fields a;
  CHECK(a.empty());
  CHECK(a.get() == nullptr);
  a.set("x", 1);
  kube::unknown_fields b(a);
  kube::unknown_fields c;
  c = a;
  CHECK(c.get() == a.get());  // shared until written
  c.set("z", 3);
  CHECK(c.get() != a.get());
  CHECK(a.size() == 1);
  CHECK(c.size() == 2);
  kube::unknown_fields d(std::move(c));
  CHECK(c.empty());  // NOLINT(bugprone-use-after-move): a moved-from one is empty
  CHECK(d.size() == 2);
  d = std::move(b);
  CHECK(d.size() == 1);
  CHECK(*d.find("x") == 1);
  auto& same = d;
  d = same;  // self-assignment keeps the members
  CHECK(d.size() == 1);
  a.clear();
  CHECK(a.empty());
  CHECK(d.size() == 1);  // still held by d
  CHECK(d.erase("x"));
  CHECK_FALSE(d.erase("x"));
  CHECK(d.empty());
}

namespace {
// A recursive type: heap_optional<node> is declared while node is incomplete.
struct node {
  int value = 0;
  kube::heap_optional<node> next;
};
}  // namespace

TEST_CASE("heap_optional: value semantics, deep copies, empty after move, recursive types", "[codegen]") {
  kube::heap_optional<std::string> a;
  CHECK_FALSE(a.has_value());
  CHECK(a == std::nullopt);
  CHECK_THROWS_AS(a.value(), std::bad_optional_access);
  a = std::string("x");
  REQUIRE(a);
  CHECK(*a == "x");
  a = std::string("y");  // assigned into the held value
  CHECK(*a == "y");

  kube::heap_optional<std::string> b = a;  // a deep copy
  *b = "z";
  CHECK(*a == "y");
  CHECK(*b == "z");
  b = a;
  CHECK(*b == "y");
  const auto& same = b;
  b = same;  // self-assignment keeps the value
  CHECK(*b == "y");

  kube::heap_optional<std::string> c = std::move(b);
  CHECK(*c == "y");
  CHECK_FALSE(b.has_value());  // NOLINT(bugprone-use-after-move): a moved-from box is empty
  auto& alias = c;
  c = std::move(alias);  // self-move keeps the value
  CHECK(c.has_value());
  c = kube::heap_optional<std::string>();
  CHECK_FALSE(c.has_value());

  CHECK(a.emplace(3, 'w') == "www");
  CHECK(a->size() == 3);
  a.reset();
  CHECK_FALSE(a);
  a = std::nullopt;
  CHECK_FALSE(a);

  node list{1, node{2, node{3, {}}}};
  node copy = list;
  copy.next->next->value = 30;
  CHECK(list.next->next->value == 3);
  CHECK(copy.next->value == 2);
  CHECK_FALSE(copy.next->next->next);
}
