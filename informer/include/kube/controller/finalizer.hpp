#pragma once

// The finalizer helper (kube/tools/finalizer.hpp) for typed objects: the same
// rules and the same guarded write — a JSON merge patch of
// metadata.finalizers carrying the object's resourceVersion, so a finalizer
// another controller added or removed in between is never overwritten (409
// -> read again, recompute, at most 5 times) — through kube::api<T>.
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
[[nodiscard]] bool is_being_deleted(const T& obj) {
  return obj.metadata.deletion_timestamp.has_value();
}

namespace detail {

inline bool is_api_error(const std::exception_ptr& e, api_errc code) {
  try {
    std::rethrow_exception(e);
  } catch (const boost::system::system_error& se) {
    return se.code() == code;
  } catch (...) {
    return false;
  }
}

/// Adds (add=true) or removes `finalizer` with guarded merge patches.
/// Returns false when there was nothing to do (already in that state, the
/// object is being deleted (add), or it is gone (remove)).
template <class T>
boost::asio::awaitable<bool> write_finalizer(const api<T>& api_ref, const T& obj_ref, std::string_view finalizer_ref,
                                             bool add) {
  api<T> a = api_ref;  // copies: the caller's arguments need only live until the first suspension
  T obj = obj_ref;
  const std::string finalizer(finalizer_ref);
  if (finalizer.empty()) {
    throw kube::error(client_errc::invalid_config, "finalizers: the finalizer name is empty");
  }
  if (obj.name().empty()) {
    throw kube::error(client_errc::invalid_config, "finalizers: the object has no metadata.name");
  }
  const std::string name(obj.name());
  for (int attempt = 1;; ++attempt) {
    std::vector<std::string> next = obj.metadata.finalizers.value_or(std::vector<std::string>{});
    const bool present = std::find(next.begin(), next.end(), finalizer) != next.end();
    if (add == present || (add && is_being_deleted(obj))) {
      co_return false;
    }
    if (add) {
      next.push_back(finalizer);
    } else {
      std::erase(next, finalizer);
    }
    unstructured guard;  // the existing helper builds the guarded body
    guard.set_name(name);
    guard.set_resource_version(obj.resource_version());
    const std::string body = kube::finalizers::guarded_patch(guard, next);
    std::exception_ptr failure;
    try {
      co_await a.async_patch(name, patch_type::merge, body);
      co_return true;
    } catch (...) {
      failure = std::current_exception();
    }
    if (!add && is_api_error(failure, api_errc::not_found)) {
      co_return false;
    }
    if (!is_api_error(failure, api_errc::conflict) || attempt >= 5) {
      std::rethrow_exception(failure);
    }
    failure = nullptr;
    try {
      obj = co_await a.async_get(name);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) {
      if (!add && is_api_error(failure, api_errc::not_found)) {
        co_return false;
      }
      std::rethrow_exception(failure);
    }
  }
}

} // namespace detail

/// Adds `finalizer` unless present or the object is being deleted. True if
/// it wrote.
template <class T>
  requires resource<T>
boost::asio::awaitable<bool> ensure_finalizer(const api<T>& a, const T& obj, std::string_view finalizer) {
  return detail::write_finalizer<T>(a, obj, finalizer, true);
}

/// Removes `finalizer` only. True if it wrote; false if absent or the
/// object is gone.
template <class T>
  requires resource<T>
boost::asio::awaitable<bool> remove_finalizer(const api<T>& a, const T& obj, std::string_view finalizer) {
  return detail::write_finalizer<T>(a, obj, finalizer, false);
}

/// The reconcile step: alive -> ensure ours (added); being deleted with
/// ours -> co_await cleanup(obj), then remove ours (finalized); otherwise
/// none.
template <class T>
  requires resource<T>
boost::asio::awaitable<kube::finalizers::action> handle_finalizer(
    const api<T>& api_ref, const std::shared_ptr<const T>& obj_ref, std::string_view finalizer_ref,
    const std::function<boost::asio::awaitable<void>(const T&)>& cleanup_ref) {
  const api<T> a = api_ref;  // copies (see write_finalizer)
  const std::shared_ptr<const T> obj = obj_ref;
  const std::string finalizer(finalizer_ref);
  const auto cleanup = cleanup_ref;
  if (!obj) {
    co_return kube::finalizers::action::none;
  }
  if (!is_being_deleted(*obj)) {
    const bool wrote = co_await detail::write_finalizer<T>(a, *obj, finalizer, true);
    co_return wrote ? kube::finalizers::action::added : kube::finalizers::action::none;
  }
  if (!has_finalizer(*obj, finalizer)) {
    co_return kube::finalizers::action::none;
  }
  if (cleanup) {
    co_await cleanup(*obj);
  }
  co_await detail::write_finalizer<T>(a, *obj, finalizer, false);
  co_return kube::finalizers::action::finalized;
}

} // namespace kube::controller
