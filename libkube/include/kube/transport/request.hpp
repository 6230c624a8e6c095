#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kube {

/// HTTP methods the API uses.
enum class http_method { get, post, put, patch, delete_, head };

/// One REST request against the apiserver, built field by field:
///
///   kube::request r;
///   r.group("apps").version("v1").namespace_("demo").resource("deployments")
///    .name("web").subresource("scale");
///   r.param("fieldManager", "me");
///
/// For paths that are not resources (/version, /readyz, discovery), set
/// raw_path("/version") instead of group/version/resource.
///
/// A plain value: copy it, keep it, reuse it. Building the target never fails;
/// names are percent-encoded. Distinct objects may be used concurrently, one
/// object not while it is being built.
class request {
public:
  request() = default;

  request& method(http_method m) {
    method_ = m;
    return *this;
  }
  /// API group; "" is the core group (/api/v1), anything else is `/apis/<group>`.
  request& group(std::string g) {
    group_ = std::move(g);
    return *this;
  }
  request& version(std::string v) {
    version_ = std::move(v);
    return *this;
  }
  /// Namespace of a namespaced resource; empty for cluster-scoped or all namespaces.
  request& namespace_(std::string ns) {
    namespace_name_ = std::move(ns);
    return *this;
  }
  /// Plural resource name ("pods", "deployments").
  request& resource(std::string r) {
    resource_ = std::move(r);
    return *this;
  }
  request& name(std::string n) {
    name_ = std::move(n);
    return *this;
  }
  request& subresource(std::string s) {
    subresource_ = std::move(s);
    return *this;
  }
  /// A path used verbatim instead of the resource path ("/version").
  request& raw_path(std::string p) {
    raw_path_ = std::move(p);
    return *this;
  }
  /// Adds a query parameter (repeatable; values are percent-encoded).
  request& param(std::string key, std::string value) {
    params_.emplace_back(std::move(key), std::move(value));
    return *this;
  }
  /// Request body and its content type (default application/json).
  request& body(std::string b, std::string content_type = "application/json") {
    body_ = std::move(b);
    content_type_ = std::move(content_type);
    return *this;
  }
  /// Accept header (default application/json).
  request& accept(std::string a) {
    accept_ = std::move(a);
    return *this;
  }

  [[nodiscard]] http_method method() const noexcept { return method_; }
  [[nodiscard]] const std::string& group() const noexcept { return group_; }
  [[nodiscard]] const std::string& version() const noexcept { return version_; }
  [[nodiscard]] const std::string& namespace_() const noexcept { return namespace_name_; }
  [[nodiscard]] const std::string& resource() const noexcept { return resource_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] const std::string& subresource() const noexcept { return subresource_; }
  [[nodiscard]] const std::string& raw_path() const noexcept { return raw_path_; }
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& params() const noexcept { return params_; }
  [[nodiscard]] const std::string& body() const noexcept { return body_; }
  [[nodiscard]] const std::string& content_type() const noexcept { return content_type_; }
  [[nodiscard]] const std::string& accept() const noexcept { return accept_; }

  /// The path and query: "/apis/apps/v1/namespaces/demo/deployments/web/scale?fieldManager=me".
  [[nodiscard]] std::string target() const;

  /// A short description for messages: "GET apps/v1 deployments demo/web/scale".
  /// Never includes the body or parameters (they may carry secrets).
  [[nodiscard]] std::string describe() const;

private:
  http_method method_ = http_method::get;
  std::string group_, version_ = "v1", namespace_name_, resource_, name_, subresource_, raw_path_;
  std::vector<std::pair<std::string, std::string>> params_;
  std::string body_, content_type_ = "application/json", accept_ = "application/json";
};

[[nodiscard]] const char* to_string(http_method m) noexcept;

}  // namespace kube
