#pragma once

#include <kube/informer/indexer.hpp>
#include <kube/informer/key_func.hpp>
#include <kube/informer/label_selector.hpp>
#include <kube/codec/string_map.hpp>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kube::informer {

/// Types with a `labels()` accessor returning a map: every generated type
/// with metadata, kube::unstructured, PartialObjectMetadata.
template <class T>
concept has_labels = requires(const T& o) {
  {o.labels().find(std::string())};
};

/// Reads an object's labels for selector matching.
template <class T>
using labels_func = std::function<kube::string_map<std::string>(const T&)>;

/// Read-only, namespaced get/list over an informer's cache (client-go's
/// generated listers, generic over T). Reads go to the Indexer, so they are
/// safe from any thread while the informer writes (see indexer: a shared
/// lock around each map read); results are shared_ptrs to immutable cached
/// objects.
///
/// Errors: std::invalid_argument for a malformed selector string.
template <class T>
class lister {
public:
  using object_ptr = std::shared_ptr<const T>;

  /// `labels` reads an object's labels; empty: `o.labels()` when T has it.
  explicit lister(std::shared_ptr<const indexer<T>> cache, labels_func<T> labels = {})
      : cache_(std::move(cache)),
        labels_(std::move(labels)) {
    if (!cache_) {
      throw std::invalid_argument("lister: a cache is required");
    }
  }

  /// Every cached object matching `selector` (all namespaces).
  [[nodiscard]] std::vector<object_ptr> list(const label_selector& selector = {}) const {
    return filter(cache_->list(), selector);
  }
  [[nodiscard]] std::vector<object_ptr> list(std::string_view selector) const {
    return list(label_selector::parse(selector));
  }

  /// Cached objects in namespace `ns` matching `selector`.
  [[nodiscard]] std::vector<object_ptr> list(const std::string& ns, const label_selector& selector) const {
    return filter(cache_->by_index(namespace_index, ns), selector);
  }

  /// The object `ns/name` (or `name` for cluster-scoped, ns empty), or null.
  [[nodiscard]] object_ptr get(std::string_view ns, std::string_view name) const {
    return cache_->get_by_key(meta_namespace_key(ns, name));
  }

  /// A view restricted to one namespace (client-go's XNamespaceLister).
  class namespaced {
  public:
    namespaced(const lister* l, std::string ns)
        : l_(l),
          ns_(std::move(ns)) {}
    [[nodiscard]] std::vector<object_ptr> list(const label_selector& selector = {}) const {
      return l_->list(ns_, selector);
    }
    [[nodiscard]] std::vector<object_ptr> list(std::string_view selector) const {
      return l_->list(ns_, label_selector::parse(selector));
    }
    [[nodiscard]] object_ptr get(std::string_view name) const { return l_->get(ns_, name); }

  private:
    const lister* l_;
    std::string ns_;
  };
  /// The lister must outlive the view.
  [[nodiscard]] namespaced in_namespace(std::string ns) const { return namespaced(this, std::move(ns)); }

private:
  std::vector<object_ptr> filter(std::vector<object_ptr> objs, const label_selector& selector) const {
    if (selector.empty()) {
      return objs;
    }
    // One loop for both ways of reading labels: the caller's function, or
    // the type's own labels(), read in place without a copy.
    const auto select = [&](const auto& labels_of) {
      std::vector<object_ptr> out;
      for (auto& o : objs) {
        if (selector.matches(labels_of(*o))) {
          out.push_back(std::move(o));
        }
      }
      return out;
    };
    if (labels_) {
      return select(labels_);
    }
    if constexpr (has_labels<T>) {
      return select([](const T& o) -> decltype(auto) { return o.labels(); });
    } else {
      throw std::invalid_argument("lister: a label selector needs a labels function for this object type");
    }
  }

  std::shared_ptr<const indexer<T>> cache_;
  labels_func<T> labels_;
};

}  // namespace kube::informer
