#pragma once

// Who is told of a client's writes. The controller runtime registers one to
// remember what a reconcile wrote, so that the next reconcile of the same
// key can wait for its caches to catch up (docs/guides/controllers.md,
// "Reading your own writes"); an application may register its own (an
// audit log, a test that counts writes).

#include <kube/codec/string_map.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace kube {

class client;

/// One successful write: its resource and the resourceVersion the server
/// gave the written object.
struct written_object {
  std::string_view group;     ///< "" for the core group
  std::string_view resource;  ///< plural: "configmaps"
  std::string_view namespace_;
  std::string_view name;
  std::string_view resource_version;
  /// The written object's labels; null when the writer cannot say (then
  /// any label selector may match it).
  const string_map<std::string>* labels = nullptr;
};

/// Receives a client's successful writes (add_write_observer).
class write_observer {
public:
  write_observer() = default;
  write_observer(const write_observer&) = delete;
  write_observer& operator=(const write_observer&) = delete;
  virtual ~write_observer() = default;

  /// Called on the client's strand after the answer was decoded, before the
  /// writer's completion runs. Must not block, must not throw.
  virtual void on_written(const written_object& w) noexcept = 0;
};

/// `o` (held weakly: it is dropped once gone) is told every successful
/// create, replace, patch or apply, status included, of a typed `api<T>` or
/// a `dynamic_api` made through `c` or any copy of it. Thread-safe.
void add_write_observer(const client& c, std::weak_ptr<write_observer> o);

}  // namespace kube
