// Fuzz target: one kubeconfig document, as kube::kubeconfig::parse reads a
// file's content (YAML with kubectl's YAML 1.1 scalar rules, base64 `*-data`
// fields, extensions of any shape). Paths are not resolved, so no file is
// read. The checks:
//   - parsing fails only with kube::error carrying client_errc::invalid_config
//     and a message that names the document (any other exception escapes and
//     is reported as a crash);
//   - a parsed config printed as `kubectl config view --raw -o json` prints it
//     (kubeconfig::to_json) is itself a kubeconfig that parses back to the
//     same JSON: what kube writes, kube (and kubectl) read.

#include "fuzz_support.hpp"

#include <kube/config/kubeconfig.hpp>
#include <kube/error.hpp>
#include <kube/exception.hpp>

#include <boost/json/serialize.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace {

constexpr const char* target = "kubeconfig_fuzz";
const std::string origin = "fuzz.yaml";

std::optional<kube::kubeconfig> parse(std::string_view yaml) {
  try {
    return kube::kubeconfig::parse(yaml, origin, false);
  } catch (const kube::error& e) {
    fuzz::require(e.code() == kube::make_error_code(kube::client_errc::invalid_config), target,
                  "a bad kubeconfig is client_errc::invalid_config");
    fuzz::require(std::string_view(e.what()).find(origin) != std::string_view::npos, target,
                  "the message names the document");
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto kc = parse(fuzz::text(data, size));
  if (!kc) return 0;
  const std::string printed = boost::json::serialize(kc->to_json());
  const auto again = parse(printed);
  fuzz::require(again.has_value(), target, "the printed config parses");
  fuzz::require(boost::json::serialize(again->to_json()) == printed, target, "the printed config reads back the same");
  return 0;
}
