#pragma once

#include <boost/json/object.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace kube {

/// Any Kubernetes object as JSON, with typed access to the fields every
/// object has (apiVersion, kind, metadata). Unknown fields are kept exactly:
/// what you read is what you write back.
///
/// A plain value type; copies are deep. Accessors return empty values for
/// missing or mistyped fields instead of throwing.
///
/// Thread safety: distinct objects may be used concurrently, one object not
/// (even the const accessors only read, but setters and metadata() write).
class unstructured {
public:
  unstructured() = default;
  explicit unstructured(boost::json::object o)
      : obj_(std::move(o)) {}

  [[nodiscard]] const boost::json::object& object() const noexcept { return obj_; }
  [[nodiscard]] boost::json::object& object() noexcept { return obj_; }

  [[nodiscard]] std::string api_version() const;
  [[nodiscard]] std::string kind() const;
  [[nodiscard]] std::string name() const;
  [[nodiscard]] std::string namespace_() const;
  [[nodiscard]] std::string uid() const;
  [[nodiscard]] std::string resource_version() const;
  [[nodiscard]] std::string generate_name() const;
  [[nodiscard]] std::optional<std::string> deletion_timestamp() const;
  [[nodiscard]] std::map<std::string, std::string> labels() const;
  [[nodiscard]] std::map<std::string, std::string> annotations() const;

  unstructured& set_api_version(std::string_view v);
  unstructured& set_kind(std::string_view v);
  unstructured& set_name(std::string_view v);
  unstructured& set_namespace(std::string_view v);
  unstructured& set_resource_version(std::string_view v);
  unstructured& set_label(std::string_view key, std::string_view value);
  unstructured& set_annotation(std::string_view key, std::string_view value);

  /// The metadata object, created if missing.
  boost::json::object& metadata();

  /// Compact JSON.
  [[nodiscard]] std::string to_json() const;

private:
  boost::json::object obj_;
};

/// One page (or all pages) of a list: the items and the list's metadata.
///
/// Thread safety: a plain value; distinct objects may be used concurrently.
struct unstructured_list {
  std::vector<unstructured> items;
  std::string resource_version;  ///< the list's metadata.resourceVersion
  std::string continue_token;    ///< metadata.continue; empty on the last page
  std::optional<long long> remaining_item_count;
};

}  // namespace kube
