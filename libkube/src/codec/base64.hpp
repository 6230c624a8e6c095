#pragma once

// Internal: Go's base64.StdEncoding, for the codecs ([]byte fields) and the
// kubeconfig (*-data fields).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kube::detail {

/// Go's base64.StdEncoding decoding: padding required, '\r' and '\n' skipped.
/// On bad input returns nullopt and sets bad_offset to the byte offset Go
/// would report.
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view in, std::size_t& bad_offset);
[[nodiscard]] std::string base64_encode(std::string_view in);

}  // namespace kube::detail
