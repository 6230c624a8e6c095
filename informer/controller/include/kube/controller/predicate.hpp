#pragma once

// Event filters: which events of a watched type reach the controller's queue
// (controller-runtime's predicates, kube-rs's predicate filters).
//
//   controller<Foo> ctrl(factory, {.primary_filter = generation_changed()});
//   ctrl.owns<Deployment>(labels_changed() || resource_version_changed());
//
// A predicate looks at an event through the objects' metadata: the kind of
// event, the old metadata (updates) and the object's metadata (the new one
// on an update, the last known one on a delete; null when the informer lost
// the object's final state). It returns true to let the event through.
//
// The ready-made ones judge updates only: an add or a delete always passes,
// as in controller-runtime, so a filtered controller still sees every
// object appear and go. An update with the same metadata.generation (or
// labels, annotations, resourceVersion) is dropped: a status write, or the
// informer's periodic resync, which hands the same object as old and new.
// Combine them with &&, || and !.
//
// The classic use: a controller that writes its own object's status filters
// its primary type on generation_changed(), so its status writes do not
// wake it again (the status subresource does not bump generation; a spec
// change does).

#include <kube/k8s/meta/v1/object_meta.hpp>

#include <concepts>
#include <functional>
#include <utility>

namespace kube {
class unstructured;
}

namespace kube::controller {

/// What happened to the object.
enum class event_kind { added, updated, deleted };

/// One event, as a predicate sees it.
struct event_view {
  event_kind kind = event_kind::added;
  /// The metadata before an update; null for adds and deletes.
  const k8s::meta::v1::ObjectMeta* old_meta = nullptr;
  /// The object's metadata: the new one on an update, the last known one on
  /// a delete. Null when the informer missed the delete and lost the
  /// object's final state.
  const k8s::meta::v1::ObjectMeta* meta = nullptr;
};

/// A filter on events; the default-constructed one lets everything through.
class predicate {
public:
  using function = std::function<bool(const event_view&)>;

  predicate() = default;
  /// Any function of the event; an empty function lets everything through.
  explicit predicate(function f)
      : f_(std::move(f)) {}

  /// True: the event reaches the queue.
  [[nodiscard]] bool operator()(const event_view& e) const { return !f_ || f_(e); }
  /// True for the default predicate, which never looks at an event.
  [[nodiscard]] bool passes_all() const noexcept { return !f_; }

  /// Both must let it through.
  friend predicate operator&&(predicate a, predicate b);
  /// Either one is enough.
  friend predicate operator||(predicate a, predicate b);
  /// Lets through what `p` drops.
  friend predicate operator!(predicate p);

private:
  function f_;
};

/// Updates pass when metadata.generation differs (a spec change); adds and
/// deletes pass.
[[nodiscard]] predicate generation_changed();
/// Updates pass when metadata.labels differ; adds and deletes pass.
[[nodiscard]] predicate labels_changed();
/// Updates pass when metadata.annotations differ; adds and deletes pass.
[[nodiscard]] predicate annotations_changed();
/// Updates pass when metadata.resourceVersion differs, so the informer's
/// resyncs are dropped; adds and deletes pass.
[[nodiscard]] predicate resource_version_changed();
/// Updates pass when `changed(old, new)` says so; adds and deletes pass.
[[nodiscard]] predicate update_if(
    std::function<bool(const k8s::meta::v1::ObjectMeta& old_meta, const k8s::meta::v1::ObjectMeta& new_meta)> changed);

/// A generated type: a predicate sees its `metadata` member as it is.
template <class T>
concept has_typed_metadata = requires(const T& o) {
  { o.metadata } -> std::convertible_to<const k8s::meta::v1::ObjectMeta&>;
};
/// What a predicate sees of an unstructured object: its `metadata`, decoded
/// (empty when absent; throws kube::decode_error naming the field when it is
/// malformed).
[[nodiscard]] k8s::meta::v1::ObjectMeta metadata_of(const unstructured& obj);

}  // namespace kube::controller
