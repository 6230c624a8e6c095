#pragma once

#include <concepts>
#include <functional>
#include <string>
#include <string_view>

namespace kube::informer {

/// Maps an object to its cache key. Must be deterministic for one object
/// identity; may throw for an object it cannot key (the exception propagates
/// out of the DeltaFIFO / Indexer call that needed the key).
template <class T>
using key_func = std::function<std::string(const T&)>;

/// Types with Kubernetes object metadata accessors (`kube::unstructured`,
/// typed API objects): `namespace_()` and `name()` returning strings.
template <class T>
concept has_object_meta = requires(const T& o) {
  { o.namespace_() } -> std::convertible_to<std::string_view>;
  { o.name() } -> std::convertible_to<std::string_view>;
};

/// Types with a `resource_version()` accessor.
template <class T>
concept has_resource_version = requires(const T& o) {
  { o.resource_version() } -> std::convertible_to<std::string_view>;
};

/// client-go's MetaNamespaceKeyFunc: "namespace/name", or "name" alone for
/// cluster-scoped objects (empty namespace).
inline std::string meta_namespace_key(std::string_view ns, std::string_view name) {
  if (ns.empty()) {
    return std::string(name);
  }
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).append(1, '/').append(name);
  return key;
}

/// `meta_namespace_key` of an object with metadata (e.g. `kube::unstructured`).
template <has_object_meta T>
std::string meta_namespace_key(const T& obj) {
  // Bind to locals: the accessors may return temporaries (unstructured does).
  const auto ns = obj.namespace_();
  const auto name = obj.name();
  return meta_namespace_key(std::string_view(ns), std::string_view(name));
}

/// A key function built from a namespace extractor and a name extractor, for
/// types without `namespace_()`/`name()` accessors.
template <class T, class NsFn, class NameFn>
key_func<T> make_namespace_key_func(NsFn ns, NameFn name) {
  return [ns = std::move(ns), name = std::move(name)](const T& obj) {
    const auto n = std::invoke(ns, obj);
    const auto nm = std::invoke(name, obj);
    return meta_namespace_key(std::string_view(n), std::string_view(nm));
  };
}

/// The default key function for T: `meta_namespace_key` when T has object
/// metadata; otherwise an empty function (the caller must supply one).
template <class T>
key_func<T> default_key_func() {
  if constexpr (has_object_meta<T>) {
    return [](const T& obj) { return meta_namespace_key(obj); };
  } else {
    return {};
  }
}

}  // namespace kube::informer
