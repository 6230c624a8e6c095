#pragma once

// The finalizer helper (kube/tools/finalizer.hpp) for typed objects: the same
// rules and the same guarded write — a JSON merge patch of
// metadata.finalizers carrying the object's resourceVersion, so a finalizer
// another controller added or removed in between is never overwritten (409
// -> read again, recompute, at most 5 times) — through kube::api<T>, with
// the same loop (kube::finalizers::detail::change_finalizer).
//
//   auto act = co_await kube::controller::handle_finalizer(foos, *req.object, "example.com/cleanup",
//       [&](const Foo& foo) -> asio::awaitable<void> { ... delete what Foo made ... });
//   if (act != kube::finalizers::action::none) co_return reconcile_result::done();  // the write triggers a new event
//
// These are coroutines (asio::awaitable), not completion-token operations;
// co_await them where they are called (they copy their arguments when they
// start, so the arguments must live until then — the usual
// `co_await f(args)` is fine).
// Errors: kube::error — client_errc::invalid_config for an empty finalizer
// name or an object without name or resourceVersion; kube.api codes from
// the server. A cleanup that throws keeps the finalizer and rethrows.

#include <kube/typed/api.hpp>
#include <kube/exception.hpp>
#include <kube/tools/finalizer.hpp>
#include <kube/dynamic/unstructured.hpp>

#include <boost/asio/awaitable.hpp>

#include <algorithm>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kube::controller {

/// metadata.finalizers contains `finalizer`.
template <class T>
  requires resource<T>
[[nodiscard]] bool has_finalizer(const T& obj, std::string_view finalizer) {
  const auto& f = obj.metadata.finalizers;
  return f && std::find(f->begin(), f->end(), finalizer) != f->end();
}

/// metadata.deletionTimestamp is set: the object is being deleted.
template <class T>
  requires resource<T>
[[nodiscard]] bool is_being_deleted(const T& obj) { return kube::finalizers::detail::deleting(obj); }

namespace detail {

/// kube::finalizers' guarded add/remove (one loop, in libkube) through the
/// typed client; true if it wrote.
template <class T>
boost::asio::awaitable<bool> write_finalizer(const api<T>& api_ref, const T& obj_ref, std::string_view finalizer_ref,
                                             bool add) {
  // Copies: the caller's arguments need only live until the first suspension.
  auto op = kube::finalizers::detail::change_finalizer(api_ref, obj_ref, std::string(finalizer_ref), add);
  auto r = co_await std::move(op);
  co_return r.wrote;
}

}  // namespace detail

/// Adds `finalizer` unless present or the object is being deleted. True if
/// it wrote.
template <class T>
  requires resource<T> boost::asio::awaitable<bool> ensure_finalizer(const api<T>& a, const T& obj,
                                                                     std::string_view finalizer) {
    return detail::write_finalizer<T>(a, obj, finalizer, true);
  }

/// Removes `finalizer` only. True if it wrote; false if absent or the
/// object is gone.
template <class T>
  requires resource<T> boost::asio::awaitable<bool> remove_finalizer(const api<T>& a, const T& obj,
                                                                     std::string_view finalizer) {
    return detail::write_finalizer<T>(a, obj, finalizer, false);
  }

/// The reconcile step: alive -> ensure ours (added); being deleted with
/// ours -> co_await cleanup(obj), then remove ours (finalized); otherwise
/// none. kube::finalizers' step (one flow, in libkube) through the typed client.
template <class T>
  requires resource<T> boost::asio::awaitable<kube::finalizers::action>
  handle_finalizer(const api<T>& api_ref, const std::shared_ptr<const T>& obj_ref, std::string_view finalizer_ref,
                   const std::function<boost::asio::awaitable<void>(const T&)>& cleanup_ref) {
    if (!obj_ref) {
      co_return kube::finalizers::action::none;
    }
    // Copies: the caller's arguments need only live until the first suspension.
    auto op = kube::finalizers::detail::handle_object(api_ref, *obj_ref, std::string(finalizer_ref), cleanup_ref);
    auto r = co_await std::move(op);
    co_return r.action;
  }

}  // namespace kube::controller
