// json_reader: generated types decoded straight from the text must agree
// with the DOM decoder on every input, reject what boost::json rejects, and
// fail cleanly (never crash) on malformed or hostile text.

#include <kube/k8s/apps/v1/deployment.hpp>
#include <kube/k8s/core/v1/pod.hpp>
#include <kube/codec/json_reader.hpp>

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using k8s::core::v1::Pod;

namespace {

Pod read_pod(std::string_view text) {
  Pod p;
  kube::codec::read_text(text, &kube::codec::read_erased<Pod>, &p);
  return p;
}

Pod dom_pod(std::string_view text) {
  Pod p;
  kube::codec::decode_text(text, &kube::codec::decode_erased<Pod>, &p);
  return p;
}

// Both decoders, compared through their encodings.
void check_same(std::string_view text) {
  INFO(text);
  const auto a = kube::to_json(read_pod(text));
  const auto b = kube::to_json(dom_pod(text));
  CHECK(a == b);
}

}  // namespace

TEST_CASE("json_reader agrees with the DOM decoder on escapes, unicode and odd spacing", "[codegen][json_reader]") {
  check_same(R"({"metadata":{"name":"caf\u00e9","labels":{"k\"ey":"v\\n","\u00fc":"ü"}}})");
  check_same(R"({"metadata":{"name":"tab\there","annotations":{"a\/b":"\ud83d\ude00"}}})");
  check_same(
      " \n\t{ \"kind\" : \"Pod\" , \"metadata\" : { \"name\" : \"p\" } , \"spec\" : { \"priority\" : -7 } } \r\n");
  check_same(R"({"spec":{"priority":0,"terminationGracePeriodSeconds":9007199254740993}})");
  check_same(R"({"spec":{"containers":[],"volumes":null,"nodeSelector":{}}})");
  check_same(R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1.5","memory":"1e3"}}}]}})");
  // unknown members of every JSON kind, at several levels
  check_same(R"({"zz":[1,-2.5e3,true,false,null,"s",{"x":[[]]}],"metadata":{"name":"p","yy":{"":0}}})");
  // deeper than boost::json's default limit of 32: both decoders accept up to 1,000 levels
  check_same(R"({"zz":)" + std::string(40, '[') + std::string(40, ']') + "}");
  // duplicate keys: the last one wins in both
  check_same(R"({"metadata":{"name":"first","name":"second","labels":{"a":"1","a":"2"}}})");
}

TEST_CASE("json_reader keeps raw JSON (managedFields) as the DOM path writes it", "[codegen][json_reader]") {
  for (const char* fields : {
           R"({"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"k:{\"port\":80}":{}}})",
           R"({ "f:a" : { } })",                     // spaces: not compact, goes through the DOM
           R"({"n":1.50,"m":[1,2e2,-0]})",           // numbers are normalised by boost::json
           R"({"esc":"\u003c\/b\u003e","t":true})",  // escapes boost::json writes differently
           R"({"deep":[[[[[[[[[[[[[[[[[[[[{}]]]]]]]]]]]]]]]]]]]]})",
       }) {
    const std::string text =
        std::string(R"({"metadata":{"name":"p","managedFields":[{"manager":"m","fieldsType":"FieldsV1","fieldsV1":)") +
        fields + "}]}}";
    check_same(text);
    const auto p = read_pod(text);
    REQUIRE(p.metadata.managed_fields);
    REQUIRE(p.metadata.managed_fields->at(0).fields_v1);
    CHECK(p.metadata.managed_fields->at(0).fields_v1->text() ==
          boost::json::serialize(boost::json::parse(fields, {}, {.max_depth = 1000})));
  }
}

TEST_CASE("json_reader keeps raw JSON nested deeper than boost::json's default limit", "[codegen][json_reader]") {
  const std::string fields = R"({"deep":)" + std::string(40, '[') + std::string(40, ']') + "}";
  const auto p = read_pod(R"({"metadata":{"managedFields":[{"fieldsV1":)" + fields + "}]}}");
  REQUIRE(p.metadata.managed_fields);
  CHECK(p.metadata.managed_fields->at(0).fields_v1->text() == fields);
}

TEST_CASE("json_reader reads integers of 18 digits itself and longer ones like the DOM decoder",
          "[codegen][json_reader]") {
  // 18 digits fit an int64 without a check; a 19th overflowed (undefined
  // behaviour, found by fuzzing) before the reader handed it to boost::json.
  for (const std::string n :
       {"999999999999999999", "-999999999999999999", "9223372036854775807", "-9223372036854775808"}) {
    const std::string text = R"({"spec":{"activeDeadlineSeconds":)" + n + "}}";
    INFO(text);
    CHECK(read_pod(text).spec->active_deadline_seconds == dom_pod(text).spec->active_deadline_seconds);
    CHECK(std::to_string(*read_pod(text).spec->active_deadline_seconds) == n);
  }
  for (const std::string n : {"9999999999999999999", "99999999999999999999999", "9223372036854775808"}) {
    const std::string text = R"({"spec":{"activeDeadlineSeconds":)" + n + "}}";
    INFO(text);
    CHECK_THROWS_AS(read_pod(text), kube::decode_error);
    CHECK_THROWS_AS(dom_pod(text), kube::decode_error);
  }
}

TEST_CASE("json_reader rejects malformed JSON that boost::json rejects", "[codegen][json_reader]") {
  const std::vector<std::string> bad{
      R"({"metadata":{"name":"a",}})",
      R"({"metadata":{"name":"a"} "kind":"Pod"})",
      R"({"spec":{"priority":01}})",
      R"({"spec":{"priority":-}})",
      R"({"spec":{"priority":1.}})",
      R"({"metadata":{"name":"a\q"}})",
      R"({"metadata":{"name":"abc)",
      R"({"kind":"Pod"} x)",
      "{\"metadata\":{\"name\":\"\xff\"}}",
      "{\"metadata\":{\"name\":\"a\x01\"}}",
      R"({"metadata":{"labels":{"a":"b",}}})",
      R"({"spec":{"containers":[{"name":"a"},]}})",
      R"({"spec":{"containers":[,]}})",
      R"({"metadata":{"name":"a"})",
      R"({"kind":tru})",
      R"({"kind":nul})",
      R"({"zz":[1 2]})",
      R"({"zz":{"a" 1}})",
      R"({,"kind":"Pod"})",
      R"({"kind":"Pod",})",
      R"({"a":1}{"b":2})",
      "",
      "   ",
  };
  for (const auto& text : bad) {
    INFO(text);
    CHECK_THROWS_AS(read_pod(text), kube::decode_error);
    CHECK_THROWS_AS(kube::from_json<Pod>(text), kube::decode_error);
  }
}

TEST_CASE("json_reader rejects malformed raw JSON that looks compact", "[codegen][json_reader]") {
  // raw_json (managedFields' fieldsV1) is checked and measured in one pass
  // when it is compact; a compact-looking text that is not JSON must still
  // be refused, by both decoders.
  for (const std::string fields : {
           R"({"a":tru})",
           R"({"a":nulls})",
           R"({"a":{})",
           R"({"a"})",
           R"({"a":{},})",
           R"(["a",])",
           R"({:{}})",
           R"({"a":{}}})",
           R"({"a":"x\q"})",
           R"({"a":"unterminated)",
           "{\"a\":\"\x01\"}",
           R"({"a"::{}})",
           R"({"a":{}"b":{}})",
           R"([,])",
           R"({"a":[}})",
           R"({"a":{]})",
           R"(x)",
           "",
       }) {
    const std::string text = R"({"metadata":{"managedFields":[{"fieldsV1":)" + fields + "}]}}";
    INFO(text);
    CHECK_THROWS_AS(read_pod(text), kube::decode_error);
    CHECK_THROWS_AS(kube::from_json<Pod>(text), kube::decode_error);
  }
}

TEST_CASE("json_reader finds quotes, escapes and non-ASCII bytes at every offset in a string",
          "[codegen][json_reader]") {
  // The string scanners look at eight bytes at a time: put each kind of
  // special byte at each position of the first words and near the end.
  for (const std::string special : {R"(\")", R"(\\)", R"(\n)", R"(\u00e9)", "\xc3\xa9", R"(\/)", "\x7f"}) {
    for (std::size_t at = 0; at <= 20; ++at) {
      const std::string s = std::string(at, 'a') + special + std::string(at % 9, 'b');
      INFO("special " << special << " at " << at);
      check_same(R"({"metadata":{"name":")" + s + R"(","labels":{")" + s + R"(":")" + s + R"("}}})");
      const std::string fields = R"({"f:)" + s + R"(":{}})";
      const auto p = read_pod(R"({"metadata":{"managedFields":[{"fieldsV1":)" + fields + "}]}}");
      REQUIRE(p.metadata.managed_fields);
      CHECK(p.metadata.managed_fields->at(0).fields_v1->text() == boost::json::serialize(boost::json::parse(fields)));
      // an unknown member's string is skipped by the same scanner
      check_same(R"({"zz":")" + s + R"(","metadata":{"name":"n"}})");
    }
  }
}

TEST_CASE("json_reader keeps compact raw JSON nested deeper than its one-pass check", "[codegen][json_reader]") {
  const std::string fields = R"({"deep":)" + std::string(300, '[') + "{}" + std::string(300, ']') + "}";
  const auto p = read_pod(R"({"metadata":{"managedFields":[{"fieldsV1":)" + fields + "}]}}");
  REQUIRE(p.metadata.managed_fields);
  CHECK(p.metadata.managed_fields->at(0).fields_v1->text() == fields);
}

TEST_CASE("json_reader fails cleanly on nesting deeper than its limit", "[codegen][json_reader]") {
  const std::string deep = R"({"zz":)" + std::string(5000, '[') + std::string(5000, ']') + "}";
  CHECK_THROWS_AS(read_pod(deep), kube::decode_error);
  CHECK_THROWS_AS(kube::from_json<Pod>(deep), kube::decode_error);
}

TEST_CASE("json_reader names the field path of a value of the wrong kind", "[codegen][json_reader]") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {R"({"spec":{"containers":{}}})", ".spec.containers: expected an array, got an object"},
      {R"({"spec":{"containers":[{"name":"c","ports":[{"containerPort":"80"}]}]}})",
       ".spec.containers[0].ports[0].containerPort: expected a 32-bit integer, got a string"},
      {R"({"spec":{"containers":[{"name":"c","ports":[{"containerPort":4294967296}]}]}})",
       ".spec.containers[0].ports[0].containerPort: integer out of range for a 32-bit integer"},
      {R"({"metadata":{"labels":{"app":7}}})", ".metadata.labels.app: expected a string, got an integer"},
      {R"({"metadata":"x"})", ".metadata: expected an object, got a string"},
      {R"({"spec":{"hostNetwork":"yes"}})", ".spec.hostNetwork: expected a boolean, got a string"},
      {R"([])", ".: expected an object, got an array"},
  };
  for (const auto& [text, message] : cases) {
    INFO(text);
    try {
      (void)read_pod(text);
      FAIL("no error");
    } catch (const kube::decode_error& e) {
      CHECK(std::string(e.what()) == message);
    }
    try {
      (void)kube::from_json<Pod>(text);
      FAIL("no error");
    } catch (const kube::decode_error& e) {
      CHECK(std::string(e.what()) == message);
    }
  }
}
