// Codecs of the hand-written test types (see test_types.hpp), written the
// way generated sources are: codec_impl.hpp helpers, unknown members kept.
#include "test_types.hpp"

#include <kube/codec/codec_impl.hpp>

namespace {
namespace json = boost::json;
namespace codec = kube::codec;

template <class S, class M>
struct fld {
  std::string_view key;
  M S::*mem;
};
template <class S, class M>
fld<S, M> f(std::string_view key, M S::*mem) {
  return {key, mem};
}

template <class S, class... M>
void decode_struct(const json::value& in, S& out, const kube::json_path& at, fld<S, M>... fields) {
  const auto& o = codec::expect_object(in, at);
  out = S{};
  for (const auto& kv : o) {
    const std::string_view key(kv.key().data(), kv.key().size());
    const kube::json_path here{&at, key};
    bool found = false;
    ((found = found || (key == fields.key ? (codec::decode_into(kv.value(), out.*(fields.mem), here), true) : false)),
     ...);
    if (!found) codec::keep_unknown(out.unknown_fields, key, kv.value());
  }
}

template <class S, class... M>
void encode_struct(const S& in, json::value& out, fld<S, M>... fields) {
  auto& o = out.emplace_object();
  (codec::put(o, fields.key, in.*(fields.mem)), ...);
  codec::put_unknown(o, in.unknown_fields);
}
}  // namespace

#define KUBE_TEST_CODEC(T, ...)                                                                                        \
  void decode(const json::value& in, T& out, const kube::json_path& at) { decode_struct(in, out, at, __VA_ARGS__); }   \
  void encode(const T& in, json::value& out) { encode_struct(in, out, __VA_ARGS__); }

#define KUBE_TEST_LIST_CODEC(T)                                                                                        \
  KUBE_TEST_CODEC(T##List, f("apiVersion", &T##List::api_version), f("kind", &T##List::kind),                          \
                  f("metadata", &T##List::metadata), f("items", &T##List::items))

namespace k8s::meta::v1 {
KUBE_TEST_CODEC(ObjectMeta, f("name", &ObjectMeta::name), f("generateName", &ObjectMeta::generate_name),
                f("namespace", &ObjectMeta::namespace_), f("resourceVersion", &ObjectMeta::resource_version),
                f("uid", &ObjectMeta::uid), f("generation", &ObjectMeta::generation), f("labels", &ObjectMeta::labels),
                f("annotations", &ObjectMeta::annotations), f("finalizers", &ObjectMeta::finalizers),
                f("deletionTimestamp", &ObjectMeta::deletion_timestamp))
KUBE_TEST_CODEC(ListMeta, f("resourceVersion", &ListMeta::resource_version), f("continue", &ListMeta::continue_),
                f("remainingItemCount", &ListMeta::remaining_item_count))
}  // namespace k8s::meta::v1

namespace k8s::core::v1 {
KUBE_TEST_CODEC(ConfigMap, f("apiVersion", &ConfigMap::api_version), f("kind", &ConfigMap::kind),
                f("metadata", &ConfigMap::metadata), f("data", &ConfigMap::data))
KUBE_TEST_LIST_CODEC(ConfigMap)
KUBE_TEST_CODEC(Pod, f("apiVersion", &Pod::api_version), f("kind", &Pod::kind), f("metadata", &Pod::metadata),
                f("spec", &Pod::spec), f("status", &Pod::status))
KUBE_TEST_LIST_CODEC(Pod)
KUBE_TEST_CODEC(Namespace, f("apiVersion", &Namespace::api_version), f("kind", &Namespace::kind),
                f("metadata", &Namespace::metadata), f("spec", &Namespace::spec), f("status", &Namespace::status))
KUBE_TEST_LIST_CODEC(Namespace)
}  // namespace k8s::core::v1

namespace k8s::apps::v1 {
KUBE_TEST_CODEC(Deployment, f("apiVersion", &Deployment::api_version), f("kind", &Deployment::kind),
                f("metadata", &Deployment::metadata), f("spec", &Deployment::spec), f("status", &Deployment::status))
KUBE_TEST_LIST_CODEC(Deployment)
}  // namespace k8s::apps::v1

namespace k8s::autoscaling::v1 {
KUBE_TEST_CODEC(ScaleSpec, f("replicas", &ScaleSpec::replicas))
KUBE_TEST_CODEC(ScaleStatus, f("replicas", &ScaleStatus::replicas), f("selector", &ScaleStatus::selector))
KUBE_TEST_CODEC(Scale, f("apiVersion", &Scale::api_version), f("kind", &Scale::kind), f("metadata", &Scale::metadata),
                f("spec", &Scale::spec), f("status", &Scale::status))
}  // namespace k8s::autoscaling::v1
