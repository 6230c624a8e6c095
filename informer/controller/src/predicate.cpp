#include <kube/controller/predicate.hpp>

#include <kube/codec/codec.hpp>
#include <kube/dynamic/unstructured.hpp>

#include <boost/json/value.hpp>

#include <utility>

namespace kube::controller {

predicate operator&&(predicate a, predicate b) {
  if (a.passes_all()) {
    return b;
  }
  if (b.passes_all()) {
    return a;
  }
  return predicate([a = std::move(a), b = std::move(b)](const event_view& e) { return a(e) && b(e); });
}

predicate operator||(predicate a, predicate b) {
  if (a.passes_all() || b.passes_all()) {
    return predicate();
  }
  return predicate([a = std::move(a), b = std::move(b)](const event_view& e) { return a(e) || b(e); });
}

predicate operator!(predicate p) {
  return predicate([p = std::move(p)](const event_view& e) { return !p(e); });
}

predicate update_if(
    std::function<bool(const k8s::meta::v1::ObjectMeta& old_meta, const k8s::meta::v1::ObjectMeta& new_meta)> changed) {
  return predicate([changed = std::move(changed)](const event_view& e) {
    if (e.kind != event_kind::updated) {
      return true;
    }
    // An update always has both; without them there is nothing to compare.
    if (e.old_meta == nullptr || e.meta == nullptr) {
      return false;
    }
    return changed(*e.old_meta, *e.meta);
  });
}

predicate generation_changed() {
  return update_if([](const k8s::meta::v1::ObjectMeta& a, const k8s::meta::v1::ObjectMeta& b) {
    return a.generation.value_or(0) != b.generation.value_or(0);
  });
}

namespace {
// An absent map and an empty one are the same labels (or annotations).
bool same_map(const std::optional<kube::string_map<std::string>>& a,
              const std::optional<kube::string_map<std::string>>& b) {
  const bool a_empty = !a || a->empty();
  const bool b_empty = !b || b->empty();
  if (a_empty || b_empty) {
    return a_empty == b_empty;
  }
  return *a == *b;
}
}  // namespace

predicate labels_changed() {
  return update_if([](const k8s::meta::v1::ObjectMeta& a, const k8s::meta::v1::ObjectMeta& b) {
    return !same_map(a.labels, b.labels);
  });
}

predicate annotations_changed() {
  return update_if([](const k8s::meta::v1::ObjectMeta& a, const k8s::meta::v1::ObjectMeta& b) {
    return !same_map(a.annotations, b.annotations);
  });
}

predicate resource_version_changed() {
  return update_if([](const k8s::meta::v1::ObjectMeta& a, const k8s::meta::v1::ObjectMeta& b) {
    return a.resource_version.value_or(std::string()) != b.resource_version.value_or(std::string());
  });
}

k8s::meta::v1::ObjectMeta metadata_of(const unstructured& obj) {
  k8s::meta::v1::ObjectMeta meta;
  const auto& o = obj.object();
  if (const auto* m = o.if_contains("metadata")) {
    const json_path root;
    const json_path at{&root, "metadata"};
    decode(*m, meta, at);
  }
  return meta;
}

}  // namespace kube::controller
