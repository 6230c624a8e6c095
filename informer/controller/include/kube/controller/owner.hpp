#pragma once

// Owner references: which object of the controller's primary type owns a
// secondary object (controller-runtime's EnqueueRequestForOwner with
// OnlyControllerOwner, client-go's metav1.GetControllerOf).
//
// Rules:
//   - only the reference with `controller: true` counts (the API server lets
//     an object have at most one); references without it are ignored;
//   - it must name the owner's kind and API group; the version in its
//     apiVersion is not compared (an owner reached through another served
//     version of the same group is the same owner);
//   - the owner's key uses the owned object's namespace for a namespaced
//     owner (owners live in their dependents' namespace) and the owner's
//     name alone for a cluster-scoped owner; a cluster-scoped dependent of
//     a namespaced owner is invalid in Kubernetes and maps to nothing.

#include <kube/typed/resource.hpp>
#include <kube/dynamic/unstructured.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace kube::controller {

/// The group of an apiVersion: "apps/v1" -> "apps", "v1" -> "" (core).
[[nodiscard]] std::string_view group_of(std::string_view api_version) noexcept;

/// What an owner is: API group, kind, scope.
struct owner_type {
  std::string group;  ///< "" for the core group
  std::string kind;
  bool namespaced = true;
};

/// The owner_type of a resource type (generated or CRD).
template <class T>
  requires resource<T> owner_type owner_type_of() {
    return owner_type{std::string(resource_traits<T>::group), std::string(resource_traits<T>::kind),
                      resource_traits<T>::namespaced};
  }

/// True if an owner reference (its apiVersion, kind and controller flag)
/// is the controller reference of an owner of type `owner`.
[[nodiscard]] bool is_controller_ref_to(std::string_view ref_api_version, std::string_view ref_kind,
                                        bool ref_controller, const owner_type& owner) noexcept;

/// The key of the owner, given the dependent's namespace and the owner's
/// name (see the namespace rule above); nullopt for an invalid combination.
[[nodiscard]] std::optional<std::string> owner_key(std::string_view dependent_namespace, std::string_view owner_name,
                                                   const owner_type& owner);

/// Typed objects: metadata.owner_references (generated ObjectMeta).
template <class U>
concept has_typed_owner_refs = requires(const U& o) {
  o.metadata.owner_references;
  { o.namespace_() } -> std::convertible_to<std::string_view>;
};

/// The key of `obj`'s controller owner of type `owner`, or nullopt.
template <has_typed_owner_refs U>
std::optional<std::string> controller_owner_key(const U& obj, const owner_type& owner) {
  if (!obj.metadata.owner_references) {
    return std::nullopt;
  }
  for (const auto& ref : *obj.metadata.owner_references) {
    if (ref.controller.value_or(false)) {
      if (!is_controller_ref_to(ref.api_version, ref.kind, true, owner) || ref.name.empty()) {
        return std::nullopt;
      }
      return owner_key(obj.namespace_(), ref.name, owner);
    }
  }
  return std::nullopt;
}

/// The same for a kube::unstructured object (metadata.ownerReferences).
[[nodiscard]] std::optional<std::string> controller_owner_key(const unstructured& obj, const owner_type& owner);

}  // namespace kube::controller
