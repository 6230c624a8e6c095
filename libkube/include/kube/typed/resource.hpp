#pragma once

// resource_traits<T>: what the typed client needs to know about a resource
// type. The code generator specializes it for every kind the API server
// serves (and kube_add_crd_types for every CRD version):
//
//   template <> struct kube::resource_traits<k8s::core::v1::Pod> {
//     static constexpr std::string_view group = "";
//     static constexpr std::string_view version = "v1";
//     static constexpr std::string_view api_version = "v1";   // "group/version" or "v1"
//     static constexpr std::string_view kind = "Pod";
//     static constexpr std::string_view plural = "pods";
//     static constexpr bool namespaced = true;
//     using list_type = k8s::core::v1::PodList;          // has `metadata` (ListMeta) and `items`
//   };
//
// Generated resource kinds also have member functions name(), namespace_(),
// resource_version() and uid() (std::string_view, empty when unset) reading
// their metadata, so informer key functions work on them unchanged.

#include <concepts>
#include <string_view>

namespace kube {

template <class T>
struct resource_traits;  // specialized by generated code

/// A type the typed client (kube::api<T>) can work with.
template <class T>
concept resource = requires {
  { resource_traits<T>::group } -> std::convertible_to<std::string_view>;
  { resource_traits<T>::version } -> std::convertible_to<std::string_view>;
  { resource_traits<T>::kind } -> std::convertible_to<std::string_view>;
  { resource_traits<T>::plural } -> std::convertible_to<std::string_view>;
  { resource_traits<T>::namespaced } -> std::convertible_to<bool>;
  typename resource_traits<T>::list_type;
};

}  // namespace kube
