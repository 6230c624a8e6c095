#pragma once

// Hand-written stand-ins for generated types, following the codegen
// contract exactly (namespaces k8s::<group>::<version>, snake_case optional
// fields, plain `metadata` on kinds, optional ListMeta on lists,
// unknown_fields kept, ADL decode/encode defined in a compiled source,
// resource_traits). Used by the typed-client tests until the generated
// types exist; a test binary must not link both.

#include <kube/codec/codec.hpp>
#include <kube/typed/resource.hpp>
#include <kube/codec/value_types.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace k8s::meta::v1 {
struct ObjectMeta {
  std::optional<std::string> name, generate_name, namespace_, resource_version, uid;
  std::optional<std::int64_t> generation;
  std::optional<std::map<std::string, std::string>> labels, annotations;
  std::optional<std::vector<std::string>> finalizers;
  std::optional<kube::timestamp> deletion_timestamp;
  kube::unknown_fields unknown_fields;
};
struct ListMeta {
  std::optional<std::string> resource_version, continue_;
  std::optional<std::int64_t> remaining_item_count;
  kube::unknown_fields unknown_fields;
};
void decode(const boost::json::value&, ObjectMeta&, const kube::json_path&);
void encode(const ObjectMeta&, boost::json::value&);
void decode(const boost::json::value&, ListMeta&, const kube::json_path&);
void encode(const ListMeta&, boost::json::value&);
}  // namespace k8s::meta::v1

namespace k8s::detail_test {
// name(), namespace_(), resource_version(), uid() as generated kinds have them.
template <class Self>
struct object_accessors {
  std::string_view name() const { return view(self().metadata.name); }
  std::string_view namespace_() const { return view(self().metadata.namespace_); }
  std::string_view resource_version() const { return view(self().metadata.resource_version); }
  std::string_view uid() const { return view(self().metadata.uid); }

private:
  const Self& self() const { return static_cast<const Self&>(*this); }
  static std::string_view view(const std::optional<std::string>& s) {
    return s ? std::string_view(*s) : std::string_view();
  }
};
}  // namespace k8s::detail_test

#define KUBE_TEST_KIND_HEAD(Kind)                                                                                      \
  struct Kind : k8s::detail_test::object_accessors<Kind> {                                                             \
    std::optional<std::string> api_version, kind;                                                                      \
    k8s::meta::v1::ObjectMeta metadata;
#define KUBE_TEST_KIND_TAIL(Kind)                                                                                      \
  kube::unknown_fields unknown_fields;                                                                                 \
  }                                                                                                                    \
  ;                                                                                                                    \
  void decode(const boost::json::value&, Kind&, const kube::json_path&);                                               \
  void encode(const Kind&, boost::json::value&);                                                                       \
  struct Kind##List {                                                                                                  \
    std::optional<std::string> api_version, kind;                                                                      \
    std::optional<k8s::meta::v1::ListMeta> metadata;                                                                   \
    std::vector<Kind> items;                                                                                           \
    kube::unknown_fields unknown_fields;                                                                               \
  };                                                                                                                   \
  void decode(const boost::json::value&, Kind##List&, const kube::json_path&);                                         \
  void encode(const Kind##List&, boost::json::value&);

namespace k8s::core::v1 {
KUBE_TEST_KIND_HEAD(ConfigMap)
std::optional<std::map<std::string, std::string>> data;
KUBE_TEST_KIND_TAIL(ConfigMap)
KUBE_TEST_KIND_HEAD(Pod)
std::optional<kube::raw_json> spec, status;
KUBE_TEST_KIND_TAIL(Pod)
KUBE_TEST_KIND_HEAD(Namespace)
std::optional<kube::raw_json> spec, status;
KUBE_TEST_KIND_TAIL(Namespace)
}  // namespace k8s::core::v1

namespace k8s::apps::v1 {
KUBE_TEST_KIND_HEAD(Deployment)
std::optional<kube::raw_json> spec, status;
KUBE_TEST_KIND_TAIL(Deployment)
}  // namespace k8s::apps::v1

namespace k8s::autoscaling::v1 {
struct ScaleSpec {
  std::optional<std::int32_t> replicas;
  kube::unknown_fields unknown_fields;
};
struct ScaleStatus {
  std::int32_t replicas = 0;
  std::optional<std::string> selector;
  kube::unknown_fields unknown_fields;
};
struct Scale {
  std::optional<std::string> api_version, kind;
  std::optional<k8s::meta::v1::ObjectMeta> metadata;
  std::optional<ScaleSpec> spec;
  std::optional<ScaleStatus> status;
  kube::unknown_fields unknown_fields;
};
void decode(const boost::json::value&, ScaleSpec&, const kube::json_path&);
void encode(const ScaleSpec&, boost::json::value&);
void decode(const boost::json::value&, ScaleStatus&, const kube::json_path&);
void encode(const ScaleStatus&, boost::json::value&);
void decode(const boost::json::value&, Scale&, const kube::json_path&);
void encode(const Scale&, boost::json::value&);
}  // namespace k8s::autoscaling::v1

#define KUBE_TEST_TRAITS(T, G, V, AV, K, P, NS)                                                                        \
  template <>                                                                                                          \
  struct kube::resource_traits<T> {                                                                                    \
    static constexpr std::string_view group = G;                                                                       \
    static constexpr std::string_view version = V;                                                                     \
    static constexpr std::string_view api_version = AV;                                                                \
    static constexpr std::string_view kind = K;                                                                        \
    static constexpr std::string_view plural = P;                                                                      \
    static constexpr bool namespaced = NS;                                                                             \
    using list_type = T##List;                                                                                         \
  };

KUBE_TEST_TRAITS(k8s::core::v1::ConfigMap, "", "v1", "v1", "ConfigMap", "configmaps", true)
KUBE_TEST_TRAITS(k8s::core::v1::Pod, "", "v1", "v1", "Pod", "pods", true)
KUBE_TEST_TRAITS(k8s::core::v1::Namespace, "", "v1", "v1", "Namespace", "namespaces", false)
KUBE_TEST_TRAITS(k8s::apps::v1::Deployment, "apps", "v1", "apps/v1", "Deployment", "deployments", true)
