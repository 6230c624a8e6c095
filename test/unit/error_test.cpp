#include <kube/error.hpp>
#include <kube/exception.hpp>
#include <kube/resource_version.hpp>

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

#include <compare>
#include <string>

TEST_CASE("Status reason decides the api error code", "[error]") {
  CHECK(kube::api_errc_from_status("NotFound", 404) == kube::api_errc::not_found);
  CHECK(kube::api_errc_from_status("AlreadyExists", 409) == kube::api_errc::already_exists);
  CHECK(kube::api_errc_from_status("Conflict", 409) == kube::api_errc::conflict);
  CHECK(kube::api_errc_from_status("Expired", 410) == kube::api_errc::expired);
  CHECK(kube::api_errc_from_status("Invalid", 422) == kube::api_errc::invalid);
  // The reason wins over the code: ServerTimeout arrives as 504 or 500.
  CHECK(kube::api_errc_from_status("ServerTimeout", 500) == kube::api_errc::server_timeout);
}

TEST_CASE("HTTP code decides when the Status has no known reason", "[error]") {
  CHECK(kube::api_errc_from_status("", 403) == kube::api_errc::forbidden);
  CHECK(kube::api_errc_from_status("", 410) == kube::api_errc::gone);
  CHECK(kube::api_errc_from_status("SomethingNew", 429) == kube::api_errc::too_many_requests);
  CHECK(kube::api_errc_from_status("", 418) == kube::api_errc::unknown);
}

TEST_CASE("error codes compare against the enums and name their category", "[error]") {
  kube::error_code ec = kube::api_errc::not_found;
  CHECK(ec == kube::api_errc::not_found);
  CHECK(ec != kube::client_errc::decode_error);
  CHECK(std::string(ec.category().name()) == "kube.api");
  CHECK(ec.message() == "NotFound");
  kube::error_code c = kube::client_errc::tls_error;
  CHECK(std::string(c.category().name()) == "kube.client");
  CHECK(kube::is_resource_expired(kube::api_errc::gone));
  CHECK(kube::is_resource_expired(kube::api_errc::expired));
  CHECK_FALSE(kube::is_resource_expired(kube::api_errc::conflict));
}

TEST_CASE("kube::error carries the server Status and both messages", "[error]") {
  kube::diagnostics d;
  d.set_client_message("GET configmaps/x in namespace demo");
  d.set_server_status(boost::json::parse(R"({"kind":"Status","reason":"NotFound","code":404,
      "message":"configmaps \"x\" not found"})")
                          .as_object());
  const kube::error e{kube::api_errc::not_found, d};
  CHECK(e.code() == kube::api_errc::not_found);
  CHECK(e.diag().server_message() == "configmaps \"x\" not found");
  const std::string what = e.what();
  CHECK(what.find("GET configmaps/x in namespace demo") != std::string::npos);
  CHECK(what.find("configmaps \"x\" not found") != std::string::npos);
}

TEST_CASE("diagnostics: no Status until one is set, copies keep it, clear drops it", "[error]") {
  kube::diagnostics d;
  CHECK(d.server_status() == nullptr);
  CHECK(d.server_message().empty());
  d.set_server_status(boost::json::object{{"kind", "Status"}, {"message", "quota exceeded"}});
  const kube::diagnostics copy = d;
  d.clear();
  CHECK(d.server_status() == nullptr);
  REQUIRE(copy.server_status() != nullptr);
  CHECK(copy.server_status()->at("message") == "quota exceeded");
  CHECK(copy.server_message() == "quota exceeded");
}

TEST_CASE("resourceVersions compare as numbers of any length, anything else does not compare", "[resource_version]") {
  using kube::compare_resource_versions;
  using kube::is_ordered_resource_version;
  CHECK(compare_resource_versions("9", "10") == std::strong_ordering::less);
  CHECK(compare_resource_versions("10", "9") == std::strong_ordering::greater);
  CHECK(compare_resource_versions("123", "123") == std::strong_ordering::equal);
  CHECK(compare_resource_versions("0", "1") == std::strong_ordering::less);
  // Longer than 64 bits: by length, then digit by digit.
  CHECK(compare_resource_versions("123456789012345678901234567890", "99999999999999999999") ==
        std::strong_ordering::greater);
  CHECK(compare_resource_versions("123456789012345678901234567890", "123456789012345678901234567891") ==
        std::strong_ordering::less);
  for (const char* bad : {"", "01", "1a", "-1", "+1", " 1", "1.0", "abc"}) {
    INFO(bad);
    CHECK_FALSE(is_ordered_resource_version(bad));
    CHECK_FALSE(compare_resource_versions(bad, "1").has_value());
    CHECK_FALSE(compare_resource_versions("1", bad).has_value());
  }
  CHECK(is_ordered_resource_version("0"));
  CHECK(kube::make_error_code(kube::client_errc::not_running).message() == "not running (stopped)");
}
