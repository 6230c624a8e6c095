#pragma once

// Kind <-> resource mapping from discovery, with kubectl's name resolution.

#include <kube/discovery/api_resource.hpp>
#include <kube/diagnostics.hpp>
#include <kube/discovery/discovery_document.hpp>
#include <kube/error.hpp>

#include <string_view>
#include <vector>

namespace kube {

/// Answers "which resource serves this kind", "which kind is this resource"
/// and "what does `kubectl get TYPE` mean" from a discovery_document, with
/// client-go's RESTMapper semantics (restmapper.NewDiscoveryRESTMapper wrapped
/// in the shortcut expander, as kubectl builds it).
///
/// Priority when a name matches several group/versions: the core group's v1
/// first, then the groups in discovery order, each group's preferred version
/// before its other versions. So `events` is core v1 Event, not
/// events.k8s.io; `hpa` is autoscaling/v2. Within one group/version an exact
/// plural match wins over a singular one.
///
/// Names are matched case-insensitively (plural, singular, short name, kind).
/// A short name is only expanded when no resource has that plural or
/// singular (kubectl's rule), and the first resource in priority order that
/// declares it wins.
///
/// Errors: a name that matches nothing gives api_errc::not_found with a
/// message naming it (`the server doesn't have a resource type "nosuch"`).
/// The throwing overloads throw kube::error with the same code and message.
/// When a name misses, the discovery may be stale (a new CRD): refetch
/// discovery (discovery_cache::invalidate) and build a new mapper, as kubectl
/// does.
///
/// Thread safety: immutable after construction; concurrent const use is safe.
class rest_mapper {
public:
  rest_mapper() = default;
  explicit rest_mapper(const discovery_document& doc);

  /// The resource that serves `gvk`. Group "" is the core group; an empty
  /// version means the first version in priority order that serves the kind.
  [[nodiscard]] const api_resource& resource_for(const group_version_kind& gvk) const;
  [[nodiscard]] const api_resource* resource_for(const group_version_kind& gvk, error_code& ec,
                                                 diagnostics& diag) const;

  /// The resource (and so its kind) for a possibly partial `gvr`: `resource`
  /// may be a plural, singular or short name; an empty group means any group,
  /// an empty version the preferred one. As client-go, a given group that
  /// matches no group exactly is tried as a prefix ("autoscal").
  [[nodiscard]] const api_resource& kind_for(const group_version_resource& gvr) const;
  [[nodiscard]] const api_resource* kind_for(const group_version_resource& gvr, error_code& ec,
                                             diagnostics& diag) const;

  /// What `kubectl get TYPE` understands: "pods", "po", "pod", "Pod",
  /// "deployments.apps", "deploy.apps", "deployments.v1.apps",
  /// "Deployment.v1.apps", "foos.samplecontroller.k8s.io". Resolution order as
  /// kubectl's builder: resource.version.group, then resource.group, then
  /// Kind.version.group, then Kind.group.
  ///
  /// One deliberate difference: kubectl drops the version when it expands a
  /// short name ("fo.v1alpha1.samplecontroller.k8s.io" lists v1); this mapper
  /// keeps it.
  [[nodiscard]] const api_resource& resolve(std::string_view type) const;
  [[nodiscard]] const api_resource* resolve(std::string_view type, error_code& ec, diagnostics& diag) const;

  /// The resources in a category ("all"), one per group/resource at its
  /// highest-priority version, in priority order; empty if none.
  [[nodiscard]] std::vector<const api_resource*> resources_for_category(std::string_view category) const;

  /// Every mapped resource, all versions, in priority order.
  [[nodiscard]] const std::vector<api_resource>& resources() const noexcept { return entries_; }

private:
  const api_resource* match_resource(std::string group, std::string version, std::string name) const;
  const api_resource* match_kind(std::string_view group, std::string_view version, std::string_view kind) const;

  std::vector<api_resource> entries_;  // priority order (see class comment)
};

}  // namespace kube
