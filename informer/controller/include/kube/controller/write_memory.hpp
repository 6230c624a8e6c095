#pragma once

// What a controller's reconciles wrote, per key (read your own writes: see
// docs/guides/controllers.md). controller<T> tells it when each reconcile
// starts and ends; the client tells it every write it makes (a
// kube::write_observer). A write made while reconciles run is
// counted to each of them: with several workers the client cannot say
// which one wrote, and a write counted to one reconcile too many costs
// that key's next reconcile a wait, never a stale read.

#include <kube/rest/write_observer.hpp>
#include <kube/informer/label_selector.hpp>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kube::controller {

/// A resource one of the controller's informers watches: writes to it are
/// kept for that informer if the informer could show them: in its namespace
/// (empty: any) and matching its label selector (empty: everything; a write
/// whose labels are unknown may match).
struct watched_resource {
  std::string group;  ///< "" for the core group
  std::string resource;
  std::string namespace_name;
  std::string label_selector = {};
};

/// The newest resourceVersion written that one informer could show.
struct written_version {
  std::string group;  ///< "" for the core group
  std::string resource;
  std::string resource_version;
  std::size_t watched = 0;  ///< the informer: its index in set_resources' list
};

/// Thread-safe: writes are told on the client's strand, reconciles start
/// and end on the controller's.
class write_memory final : public kube::write_observer {
public:
  /// Only writes to these resources are kept, each for the informers that
  /// could show it (set before the first reconcile). A selector that does
  /// not parse selects everything here (the informer's own list refuses it).
  void set_resources(std::vector<watched_resource> resources);

  /// A reconcile starts: writes from now on are its, until end(id, ...).
  [[nodiscard]] std::uint64_t begin();
  /// Reconcile `id` of `key` ended: its writes wait for the key's next
  /// reconcile (merged with what is kept for the key already).
  void end(std::uint64_t id, const std::string& key);
  /// What the key's earlier reconciles wrote that nobody waited for yet;
  /// forgotten here.
  [[nodiscard]] std::vector<written_version> take(const std::string& key);

  /// Keys with writes kept (tests, memory bound checks).
  [[nodiscard]] std::size_t keys() const;

  void on_written(const kube::written_object& w) noexcept override;

private:
  static void merge(std::vector<written_version>& into, const written_version& w);

  mutable std::mutex m_;
  std::vector<watched_resource> resources_;
  std::vector<std::optional<informer::label_selector>> selectors_;  // parsed; nullopt: everything
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, std::vector<written_version>> active_;
  std::unordered_map<std::string, std::vector<written_version>> pending_;
};

}  // namespace kube::controller
