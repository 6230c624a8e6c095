#pragma once

// Internal: the few apimachinery messages libkube reads from protobuf
// without the generated types (which live in kube::k8s_meta): a Status
// (error answers and watch ERROR events) and the metadata of a watch
// BOOKMARK. Each becomes the JSON object the JSON wire would have carried,
// so the code after it does not care which wire format came in.

#include <kube/codec/codec.hpp>

#include <boost/json/object.hpp>

#include <string_view>

namespace kube::detail {

/// A metav1.Status message (an envelope's raw) as its JSON object
/// (apiVersion, kind, status, message, reason, details, code). Throws
/// decode_error.
[[nodiscard]] boost::json::object status_from_protobuf(std::string_view message);

/// {"apiVersion", "kind", "metadata": {"resourceVersion", "annotations"}} of
/// an object whose message holds its ObjectMeta in field 1 (every top-level
/// built-in kind): what a BOOKMARK event carries. Throws decode_error.
[[nodiscard]] boost::json::object bookmark_from_protobuf(const codec::protobuf_envelope& env);

}  // namespace kube::detail
