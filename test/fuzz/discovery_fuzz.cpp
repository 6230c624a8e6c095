// Fuzz target: the discovery documents (kube::discovery_document's
// decoders). Every input goes to all four decoders: aggregated
// (APIGroupDiscoveryList), legacy /api (APIVersions), legacy /apis
// (APIGroupList) and a legacy resource list (APIResourceList, expected at
// v1 and at apps/v1). The checks:
//   - a decoder fails only with client_errc::decode_error and a message in
//     the diagnostics that names the source (never an exception);
//   - an aggregated document that decodes, written back with to_json (as
//     the discovery cache writes it), decodes to an equal document.

#include "fuzz_support.hpp"

#include <kube/diagnostics.hpp>
#include <kube/discovery/discovery_document.hpp>
#include <kube/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr const char* target = "discovery_fuzz";
constexpr std::string_view source = "/fuzz";

// A decoder's result: success, or decode_error with a message naming the source.
void check_result(kube::error_code ec, const kube::diagnostics& diag) {
  if (!ec) return;
  fuzz::require(ec == kube::make_error_code(kube::client_errc::decode_error), target,
                "a bad document is client_errc::decode_error");
  fuzz::require(diag.client_message().find(source) != std::string::npos, target, "the message names the source");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body = fuzz::text(data, size);

  kube::diagnostics diag;
  kube::discovery_document doc;
  const auto ec = kube::discovery_document::parse_aggregated(body, source, doc.groups, diag);
  check_result(ec, diag);
  if (!ec) {
    const std::string written = doc.to_json();
    kube::discovery_document back;
    kube::diagnostics back_diag;
    fuzz::require(!kube::discovery_document::parse_aggregated(written, source, back.groups, back_diag), target,
                  "a written document decodes");
    fuzz::require(back == doc, target, "a written document decodes to an equal document");
  }

  std::vector<std::string> versions;
  diag = {};
  check_result(kube::discovery_document::parse_api_versions(body, source, versions, diag), diag);

  std::vector<kube::api_group> groups;
  diag = {};
  check_result(kube::discovery_document::parse_group_list(body, source, groups, diag), diag);

  for (const kube::group_version& gv : {kube::group_version{"", "v1"}, kube::group_version{"apps", "v1"}}) {
    std::vector<kube::api_resource> resources;
    diag = {};
    check_result(kube::discovery_document::parse_resource_list(body, source, gv, resources, diag), diag);
  }
  return 0;
}
