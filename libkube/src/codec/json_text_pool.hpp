#pragma once

// One shared buffer per distinct raw_json text (see raw_json in
// value_types.hpp). Every Pod a ReplicaSet creates carries the same
// managedFields (fieldsV1) text, a few kilobytes; an informer that caches
// ten thousand of them keeps that text once instead of ten thousand times.

#include <memory>
#include <string>
#include <string_view>

namespace kube::detail {

/// The shared, immutable copy of `text`: the one already in use when some
/// live raw_json holds equal text, else a new one that later calls with the
/// same text share. The pool holds no strong reference: a text is freed
/// when its last holder lets go.
///
/// Thread safety: may be called from any thread (one mutex around the pool).
[[nodiscard]] std::shared_ptr<const std::string> shared_json_text(std::string_view text);

/// The shared copy of `text` when some live raw_json holds equal text, else
/// null. Every text in the pool was checked to be compact JSON before it
/// entered, so a reader that finds its text here need not check it again.
[[nodiscard]] std::shared_ptr<const std::string> find_json_text(std::string_view text);

}  // namespace kube::detail
