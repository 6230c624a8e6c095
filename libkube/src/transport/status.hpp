#pragma once

// Internal: reading what the server said besides the body: Warning headers
// and the Status of a non-2xx answer.

#include <kube/diagnostics.hpp>
#include <kube/error.hpp>
#include <kube/transport/request.hpp>

#include <boost/beast/http/fields.hpp>

#include <string>
#include <vector>

namespace kube::detail {

/// The text of each `299 - "text" "date"` Warning header.
std::vector<std::string> parse_warnings(const boost::beast::http::fields& headers);

/// Turns a non-2xx answer into (api error code, diagnostics with Status).
/// A body that is not a Status is kept as a bounded excerpt.
error_code status_error(unsigned http_status, const std::string& body, const request& req, diagnostics& diag);

}  // namespace kube::detail
