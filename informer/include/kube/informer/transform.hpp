#pragma once

// Ready-made transforms for informer_params::transform.

#include <kube/informer/reflector.hpp>

#include <kube/dynamic/unstructured.hpp>

#include <boost/json/object.hpp>
#include <boost/json/storage_ptr.hpp>

#include <memory>

namespace kube::informer {

/// Drops metadata.managedFields (often half of an object's JSON) before
/// caching. The result is a fresh copy on the default JSON storage, so it
/// pins no per-event decoding arena and frees what it drops.
inline transform_func<unstructured> strip_managed_fields() {
  return [](std::shared_ptr<const unstructured> in) -> std::shared_ptr<const unstructured> {
    const auto& src = in->object();
    boost::json::object out(boost::json::storage_ptr{});
    out.reserve(src.size());
    for (const auto& kv : src) {
      if (kv.key() == "metadata" && kv.value().is_object()) {
        const auto& md = kv.value().as_object();
        boost::json::object m(boost::json::storage_ptr{});
        m.reserve(md.size());
        for (const auto& f : md) {
          if (f.key() != "managedFields") {
            m.emplace(f.key(), f.value());
          }
        }
        out.emplace(kv.key(), std::move(m));
      } else {
        out.emplace(kv.key(), kv.value());
      }
    }
    return std::make_shared<const unstructured>(std::move(out));
  };
}

}  // namespace kube::informer
