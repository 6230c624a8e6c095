// Finalizer helper, the parts without I/O: reading the list and the guarded patch.
#include <kube/exception.hpp>
#include <kube/tools/finalizer.hpp>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

namespace json = boost::json;

namespace {
kube::unstructured obj(const char* json_text) { return kube::unstructured(json::parse(json_text).as_object()); }
}  // namespace

TEST_CASE("finalizers: list, contains, is_being_deleted", "[finalizer]") {
  const auto o = obj(R"({"metadata":{"name":"x","resourceVersion":"7","finalizers":["a.io/x","b.io/y",3]}})");
  CHECK(kube::finalizers::list(o) == std::vector<std::string>{"a.io/x", "b.io/y"});
  CHECK(kube::finalizers::contains(o, "b.io/y"));
  CHECK_FALSE(kube::finalizers::contains(o, "c.io/z"));
  CHECK_FALSE(kube::finalizers::is_being_deleted(o));
  CHECK(kube::finalizers::is_being_deleted(obj(R"({"metadata":{"deletionTimestamp":"2024-01-01T00:00:00Z"}})")));
  CHECK(kube::finalizers::list(obj(R"({"metadata":{"finalizers":"oops"}})")).empty());
  CHECK(kube::finalizers::list(obj(R"({})")).empty());
}

TEST_CASE("finalizers: the patch is pinned to the resourceVersion", "[finalizer]") {
  const auto o = obj(R"({"metadata":{"name":"x","resourceVersion":"7","finalizers":["a.io/x"]}})");
  const auto p = json::parse(kube::finalizers::guarded_patch(o, {"a.io/x", "ours.io/f"})).as_object();
  CHECK(p.at("metadata").at("resourceVersion").as_string() == "7");
  CHECK(json::serialize(p.at("metadata").at("finalizers")) == R"(["a.io/x","ours.io/f"])");
  const auto empty = json::parse(kube::finalizers::guarded_patch(o, {})).as_object();
  CHECK(empty.at("metadata").at("finalizers").is_null());

  try {
    (void)kube::finalizers::guarded_patch(obj(R"({"metadata":{"name":"x"}})"), {"f"});
    FAIL("expected an error");
  } catch (const kube::error& e) {
    CHECK(e.code() == kube::client_errc::invalid_config);
    CHECK_THAT(e.diag().client_message(), Catch::Contains("no metadata.resourceVersion"));
  }
}
