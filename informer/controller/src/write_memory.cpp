#include <kube/controller/write_memory.hpp>
#include <kube/resource_version.hpp>

#include <algorithm>
#include <compare>

namespace kube::controller {

void write_memory::set_resources(std::vector<watched_resource> resources) {
  std::vector<std::optional<informer::label_selector>> selectors;
  for (const auto& r : resources) {
    std::optional<informer::label_selector> sel;
    if (!r.label_selector.empty()) {
      try {
        sel = informer::label_selector::parse(r.label_selector);
      } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): everything, as documented
      }
    }
    selectors.push_back(std::move(sel));
  }
  const std::lock_guard lock(m_);
  resources_ = std::move(resources);
  selectors_ = std::move(selectors);
}

std::uint64_t write_memory::begin() {
  const std::lock_guard lock(m_);
  const std::uint64_t id = next_id_++;
  active_.try_emplace(id);
  return id;
}

void write_memory::end(std::uint64_t id, const std::string& key) {
  const std::lock_guard lock(m_);
  auto it = active_.find(id);
  if (it == active_.end()) return;
  if (!it->second.empty()) {
    auto& kept = pending_[key];
    for (const auto& w : it->second) merge(kept, w);
  }
  active_.erase(it);
}

std::vector<written_version> write_memory::take(const std::string& key) {
  const std::lock_guard lock(m_);
  auto it = pending_.find(key);
  if (it == pending_.end()) return {};
  std::vector<written_version> out = std::move(it->second);
  pending_.erase(it);
  return out;
}

std::size_t write_memory::keys() const {
  const std::lock_guard lock(m_);
  return pending_.size();
}

void write_memory::on_written(const kube::written_object& w) noexcept {
  try {
    const std::lock_guard lock(m_);
    if (active_.empty() || w.resource_version.empty()) return;
    for (std::size_t i = 0; i < resources_.size(); ++i) {
      const auto& r = resources_[i];
      if (r.group != w.group || r.resource != w.resource) continue;
      if (!r.namespace_name.empty() && r.namespace_name != w.namespace_) continue;    // outside its namespace
      if (selectors_[i] && w.labels && !selectors_[i]->matches(*w.labels)) continue;  // its selector leaves it out
      const written_version v{std::string(w.group), std::string(w.resource), std::string(w.resource_version), i};
      for (auto& [id, writes] : active_) merge(writes, v);
    }
  } catch (...) {
    // Out of memory: this write is not waited for (the next reconcile may
    // read a cache without it, as with the feature off).
  }
}

// One entry per informer, with the newest resourceVersion (compared as
// numbers; one that cannot be compared replaces the old).
void write_memory::merge(std::vector<written_version>& into, const written_version& w) {
  for (auto& have : into) {
    if (have.watched == w.watched) {
      const auto order = compare_resource_versions(w.resource_version, have.resource_version);
      if (!order || *order == std::strong_ordering::greater) have.resource_version = w.resource_version;
      return;
    }
  }
  into.push_back(w);
}

}  // namespace kube::controller
