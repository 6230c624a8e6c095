// Types generated from test/data/crd/widgets.yaml by kube_add_crd_types.

#include <kube/codec/codec.hpp>
#include <kube/codec/json_reader.hpp>
#include <kube/test/widgets.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

using codegen::v1::Widget;

TEST_CASE("CRD types: one namespace per served version, traits from the CRD", "[codegen]") {
  using traits = kube::resource_traits<Widget>;
  STATIC_REQUIRE(traits::group == "codegen.kube.test");
  STATIC_REQUIRE(traits::version == "v1");
  STATIC_REQUIRE(traits::api_version == "codegen.kube.test/v1");
  STATIC_REQUIRE(traits::kind == "Widget");
  STATIC_REQUIRE(traits::plural == "widgets");
  STATIC_REQUIRE(traits::namespaced);
  STATIC_REQUIRE(std::is_same_v<traits::list_type, codegen::v1::WidgetList>);
  STATIC_REQUIRE(kube::resource<codegen::v1beta1::Widget>);
  // field types follow the schema: required -> plain, int32, int-or-string, maps, nested structs
  STATIC_REQUIRE(std::is_same_v<decltype(codegen::v1::WidgetSpec::size), std::int32_t>);
  STATIC_REQUIRE(std::is_same_v<decltype(codegen::v1::WidgetSpec::port), std::optional<kube::int_or_string>>);
  STATIC_REQUIRE(std::is_same_v<decltype(codegen::v1::WidgetSpec::ports),
                                std::optional<std::vector<codegen::v1::WidgetSpecPortsItem>>>);
  STATIC_REQUIRE(
      std::is_same_v<decltype(codegen::v1::WidgetSpec::limits), std::optional<kube::string_map<std::string>>>);
  STATIC_REQUIRE(std::is_same_v<decltype(codegen::v1::WidgetSpec::template_), std::optional<kube::raw_json>>);
  STATIC_REQUIRE(std::is_same_v<decltype(codegen::v1beta1::WidgetSpec::size), std::optional<std::int64_t>>);
  STATIC_REQUIRE(std::is_same_v<decltype(Widget::metadata), k8s::meta::v1::ObjectMeta>);
}

TEST_CASE("CRD types decode, keep unknown fields, and encode back", "[codegen]") {
  const char* text = R"({"apiVersion":"codegen.kube.test/v1","kind":"Widget",
    "metadata":{"name":"w","namespace":"ns","labels":{"a":"b"}},
    "spec":{"size":3,"port":"http","ports":[{"name":"p","number":80}],"template":{"any":["thing",1]},"color":"blue"},
    "status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2024-05-01T10:00:00Z"}]}})";
  auto w = kube::from_json<Widget>(text);
  CHECK(w.name() == "w");
  CHECK(w.labels().at("a") == "b");
  CHECK(w.spec->size == 3);
  CHECK(w.spec->port->string_value() == "http");
  CHECK(w.spec->ports->at(0).number == 80);
  REQUIRE(w.spec->unknown_fields.find("color") != nullptr);
  w.spec->size = 4;
  const auto out = kube::to_json(w);
  CHECK(out.find(R"("color":"blue")") != std::string::npos);
  CHECK(out.find(R"("size":4)") != std::string::npos);
  CHECK(out.find(R"("template":{"any":["thing",1]})") != std::string::npos);
  CHECK_THROWS_WITH(kube::from_json<Widget>(R"({"spec":{"size":"big"}})"),
                    ".spec.size: expected a 32-bit integer, got a string");
}

TEST_CASE("a number too large for a double is a decode error, in both decoders", "[codegen]") {
  // Boost.JSON reads 1E400 as infinity and writes it back as `Infinity`,
  // which is not JSON; Go's encoding/json refuses the number. So do we.
  const std::string text = R"({"spec":{"template":{"d":[1E400]}}})";
  CHECK_THROWS_WITH(kube::from_json<Widget>(text), Catch::Contains("exponent"));
  Widget w;
  CHECK_THROWS_AS(kube::codec::read_text(text, &kube::codec::read_erased<Widget>, &w), kube::decode_error);
  CHECK_THROWS_AS(kube::raw_json::parse("[-1E400]"), std::invalid_argument);
  // Large but finite numbers stay.
  const auto ok = kube::from_json<Widget>(R"({"spec":{"template":{"d":[1E300]}}})");
  CHECK_NOTHROW(kube::from_json<Widget>(kube::to_json(ok)));
}

TEST_CASE("a double reads correctly rounded and survives decode and encode, in both decoders", "[codegen]") {
  // Boost.JSON 1.81 reads 9.007199666666666E52 two ulps low and writes the
  // shortest text of what it read, so the number shrank on every round trip
  // (a fuzz finding, test/fuzz/corpus/pod_decode/crash-2849f576...). Go's
  // strconv reads it exactly; so does libkube.
  const char* const texts[] = {"9.007199666666666E52",
                               "9.007199666666665E52",
                               "90071996666666666666666666666666666666666666666666693",
                               "1E-1",
                               "5E-324",
                               "1.7976931348623157E308"};
  for (const char* t : texts) {
    INFO(t);
    // glibc's strtod rounds correctly (libc++ 16 has no from_chars for double).
    char* end = nullptr;
    const double want = std::strtod(t, &end);
    REQUIRE(end == t + std::strlen(t));
    const std::string text = std::string(R"({"spec":{"template":{"d":[)") + t + R"(]},"x":)" + t + "}}";
    const auto w = kube::from_json<Widget>(text);
    CHECK(w.spec->template_->value().at("d").as_array().at(0).as_double() == want);
    REQUIRE(w.spec->unknown_fields.find("x") != nullptr);
    CHECK(w.spec->unknown_fields.find("x")->as_double() == want);
    Widget via_reader;
    kube::codec::read_text(text, &kube::codec::read_erased<Widget>, &via_reader);
    CHECK(via_reader.spec->unknown_fields.find("x")->as_double() == want);
    const auto once = kube::to_json(w);
    CHECK(kube::to_json(kube::from_json<Widget>(once)) == once);
  }
}
