#pragma once

// Finalizers for controllers, on kube::unstructured objects through the
// dynamic client: add ours while an object lives, and when it is being
// deleted (metadata.deletionTimestamp set) run our cleanup, then remove
// ours — never anyone else's.
//
// Every write is a JSON merge patch of metadata.finalizers that carries the
// object's metadata.resourceVersion: the apiserver applies it only to that
// exact version and answers 409 Conflict otherwise (the "optimistic lock"
// merge patch controller-runtime uses). So a finalizer another controller
// added or removed in between is never overwritten; on conflict the helper
// reads the object again and recomputes the list (at most 5 times).
//
// Typed objects (kube::api<T>, generated or CRD types) get the same rules
// and the same loop through contains, is_being_deleted, ensure, remove and
// handle below:
//
//   auto act = co_await kube::finalizers::handle(foos, req.object, "example.com/cleanup",
//       [&](const Foo& foo) -> asio::awaitable<void> { ... delete what Foo made ... });
//   if (act != kube::finalizers::action::none) co_return reconcile_result::done();  // the write triggers a new event

#include <kube/detail/initiate.hpp>
#include <kube/dynamic/dynamic_api.hpp>
#include <kube/dynamic/unstructured.hpp>
#include <kube/exception.hpp>
#include <kube/typed/resource.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kube {
template <class T>
  requires resource<T>
class api;
}  // namespace kube

namespace kube::finalizers {

/// metadata.finalizers (strings only).
[[nodiscard]] std::vector<std::string> list(const unstructured& obj);
[[nodiscard]] bool contains(const unstructured& obj, std::string_view finalizer);
/// metadata.deletionTimestamp is set: finalizers are running.
[[nodiscard]] bool is_being_deleted(const unstructured& obj);

/// The guarded merge patch that sets metadata.finalizers to `finalizers` on
/// exactly obj's resourceVersion. Throws kube::error(client_errc::invalid_config)
/// if obj has no resourceVersion (an unguarded write could drop another
/// controller's finalizer).
[[nodiscard]] std::string guarded_patch(const unstructured& obj, const std::vector<std::string>& finalizers);

/// What async_handle did.
enum class action {
  none,       ///< nothing to do (ours present and alive; or deleting without ours)
  added,      ///< ours was added
  finalized,  ///< deleting: cleanup ran and ours was removed
};

struct result {
  finalizers::action action = action::none;
  unstructured object;  ///< the object after the change (empty if it is gone)
};

/// The cleanup to run before our finalizer is removed; it receives the
/// object being deleted. Throwing keeps the finalizer (retry later).
using cleanup_fn = std::function<boost::asio::awaitable<void>(const unstructured&)>;

namespace detail {

/// The accessors change_finalizer needs: unstructured here, generated
/// types (metadata.finalizers, metadata.deletionTimestamp) below.
inline std::vector<std::string> finalizers_of(const unstructured& obj) { return list(obj); }
inline bool deleting(const unstructured& obj) { return is_being_deleted(obj); }
template <class T>
std::vector<std::string> finalizers_of(const T& obj) {
  return obj.metadata.finalizers.value_or(std::vector<std::string>{});
}
template <class T>
bool deleting(const T& obj) {
  return obj.metadata.deletion_timestamp.has_value();
}

inline bool has(const std::vector<std::string>& finalizers, std::string_view finalizer) {
  return std::find(finalizers.begin(), finalizers.end(), finalizer) != finalizers.end();
}

inline void check_args(std::string_view name, std::string_view finalizer) {
  if (finalizer.empty()) throw kube::error(client_errc::invalid_config, "finalizers: the finalizer name is empty");
  if (name.empty()) throw kube::error(client_errc::invalid_config, "finalizers: the object has no metadata.name");
}

inline bool is_api_error(const std::exception_ptr& e, api_errc code) {
  try {
    std::rethrow_exception(e);
  } catch (const boost::system::system_error& x) {
    return x.code() == code;
  } catch (...) {
    return false;
  }
}

/// What change_finalizer did: `object` as written, as last read when there
/// was nothing to do, or empty when it is gone (removal only).
template <class Object>
struct change_outcome {
  Object object{};
  bool wrote = false;
};

/// Adds (add=true) or removes `finalizer` with guarded merge patches,
/// reading the object again on conflict (at most 5 times). The one loop
/// behind the dynamic and the typed helpers here:
/// `Api` is dynamic_api or api<T>, `Object` what it reads and writes.
template <class Api, class Object>
boost::asio::awaitable<change_outcome<Object>> change_finalizer(Api api, Object obj, std::string finalizer, bool add) {
  const std::string name(obj.name());
  check_args(name, finalizer);
  constexpr int max_rereads = 5;
  for (int attempt = 0;; ++attempt) {
    auto next = finalizers_of(obj);
    const bool present = has(next, finalizer);
    if (add ? (present || deleting(obj)) : !present) co_return change_outcome<Object>{std::move(obj), false};
    if (add) {
      next.push_back(finalizer);
    } else {
      std::erase(next, finalizer);
    }
    unstructured guard;  // name and resourceVersion: all guarded_patch reads
    guard.set_name(name);
    guard.set_resource_version(std::string(obj.resource_version()));
    const auto body = guarded_patch(guard, next);
    std::exception_ptr failure;
    try {
      auto written = co_await api.async_patch(name, patch_type::merge, body);
      co_return change_outcome<Object>{std::move(written), true};
    } catch (...) {
      failure = std::current_exception();
    }
    if (!add && is_api_error(failure, api_errc::not_found)) co_return change_outcome<Object>{};
    if (!is_api_error(failure, api_errc::conflict) || attempt >= max_rereads) std::rethrow_exception(failure);
    // Someone else wrote first: read the object again and recompute the list.
    failure = nullptr;
    try {
      obj = co_await api.async_get(name);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) {
      if (!add && is_api_error(failure, api_errc::not_found)) co_return change_outcome<Object>{};
      std::rethrow_exception(failure);
    }
  }
}

template <class Object>
struct handle_outcome {
  finalizers::action action = action::none;
  Object object{};
};

/// The reconcile step (see async_handle), for any client and object type.
template <class Api, class Object, class Cleanup>
boost::asio::awaitable<handle_outcome<Object>> handle_object(Api api, Object obj, std::string finalizer,
                                                             Cleanup cleanup) {
  check_args(std::string(obj.name()), finalizer);
  const bool ours = has(finalizers_of(obj), finalizer);
  if (!deleting(obj)) {
    if (ours) co_return handle_outcome<Object>{action::none, std::move(obj)};
    auto op = change_finalizer(std::move(api), std::move(obj), finalizer, true);
    auto r = co_await std::move(op);
    const auto done = has(finalizers_of(r.object), finalizer) ? action::added : action::none;
    co_return handle_outcome<Object>{done, std::move(r.object)};
  }
  if (!ours) co_return handle_outcome<Object>{action::none, std::move(obj)};
  if (cleanup) {
    auto work = cleanup(obj);
    co_await std::move(work);
  }
  auto op = change_finalizer(std::move(api), std::move(obj), finalizer, false);
  auto r = co_await std::move(op);
  co_return handle_outcome<Object>{action::finalized, std::move(r.object)};
}

void start_ensure(dynamic_api api, unstructured obj, std::string finalizer, boost::asio::any_io_executor ex,
                  kube::detail::completion<unstructured> h);
void start_remove(dynamic_api api, unstructured obj, std::string finalizer, boost::asio::any_io_executor ex,
                  kube::detail::completion<unstructured> h);
void start_handle(dynamic_api api, unstructured obj, std::string finalizer, cleanup_fn cleanup,
                  boost::asio::any_io_executor ex, kube::detail::completion<result> h);
}  // namespace detail

// ---- typed objects (kube::api<T>) -------------------------------------------
// Coroutines (asio::awaitable): co_await them where they are called. They
// copy their arguments when they start, so the arguments need only live
// until then (the usual `co_await f(args)` is fine). Errors: kube::error, as
// for the operations below. A cleanup that throws keeps the finalizer and
// rethrows.

/// metadata.finalizers contains `finalizer`.
template <class T>
  requires resource<T>
[[nodiscard]] bool contains(const T& obj, std::string_view finalizer) {
  const auto& f = obj.metadata.finalizers;
  return f && std::find(f->begin(), f->end(), finalizer) != f->end();
}

/// metadata.deletionTimestamp is set: the object is being deleted.
template <class T>
  requires resource<T>
[[nodiscard]] bool is_being_deleted(const T& obj) { return detail::deleting(obj); }

/// Adds `finalizer` unless present or the object is being deleted. True if
/// it wrote.
template <class T>
  requires resource<T> boost::asio::awaitable<bool> ensure(const api<T>& a, const T& obj, std::string_view finalizer) {
    auto op = detail::change_finalizer(a, obj, std::string(finalizer), true);
    auto r = co_await std::move(op);
    co_return r.wrote;
  }

/// Removes `finalizer` only. True if it wrote; false if absent or the
/// object is gone.
template <class T>
  requires resource<T> boost::asio::awaitable<bool> remove(const api<T>& a, const T& obj, std::string_view finalizer) {
    auto op = detail::change_finalizer(a, obj, std::string(finalizer), false);
    auto r = co_await std::move(op);
    co_return r.wrote;
  }

/// The reconcile step: alive -> ensure ours (added); being deleted with
/// ours -> co_await cleanup(obj), then remove ours (finalized); otherwise
/// none. A null `obj` (the object is gone) is none.
template <class T>
  requires resource<T> boost::asio::awaitable<action>
  handle(const api<T>& a, const std::shared_ptr<const T>& obj, std::string_view finalizer,
         const std::function<boost::asio::awaitable<void>(const T&)>& cleanup) {
    if (!obj) co_return action::none;
    auto op = detail::handle_object(a, *obj, std::string(finalizer), cleanup);
    auto r = co_await std::move(op);
    co_return r.action;
  }

// ---- unstructured objects (kube::dynamic_api) --------------------------------
// The async operations below are Asio initiating functions with completion
// void(error_code, T) (kube::use_awaitable throws kube::error with the
// server's Status). They run as a coroutine on `ex` (usually the caller's
// executor: co_await this_coro::executor). Errors: client_errc::invalid_config
// for an empty finalizer name or an object without name or resourceVersion;
// kube.api codes from the server (conflict only after 5 rereads).
// Cancellation: per operation (terminal), through the token's slot.
// Thread safety: the functions keep no state; operations on distinct objects
// may run concurrently (dynamic_api copies share one client).
// Arguments are taken by reference/view and copied into the operation, so
// `co_await async_handle(ex, api, obj, "x", cleanup)` creates no class
// temporaries inside the co_await (see the g++ 12 note in docs/guides/client.md).

/// Adds `finalizer` unless present (then no request is made) or the object
/// is being deleted (new finalizers are not allowed then). Completes with
/// the object as written (or as given, when nothing was written).
template <class Token = use_awaitable_t>
auto async_ensure(const boost::asio::any_io_executor& ex, const dynamic_api& api, const unstructured& obj,
                  std::string_view finalizer, Token&& token = {}) {
  return kube::detail::initiate<unstructured>(
      [api, obj, f = std::string(finalizer), ex](kube::detail::completion<unstructured> h) mutable {
        detail::start_ensure(std::move(api), std::move(obj), std::move(f), std::move(ex), std::move(h));
      },
      std::forward<Token>(token));
}

/// Removes `finalizer` only (no request when absent). An object that is
/// already gone (404) counts as done: completes with an empty object.
template <class Token = use_awaitable_t>
auto async_remove(const boost::asio::any_io_executor& ex, const dynamic_api& api, const unstructured& obj,
                  std::string_view finalizer, Token&& token = {}) {
  return kube::detail::initiate<unstructured>(
      [api, obj, f = std::string(finalizer), ex](kube::detail::completion<unstructured> h) mutable {
        detail::start_remove(std::move(api), std::move(obj), std::move(f), std::move(ex), std::move(h));
      },
      std::forward<Token>(token));
}

/// The reconcile step: alive -> ensure ours; being deleted with ours ->
/// co_await cleanup(obj), then remove ours; being deleted without ours ->
/// nothing. If cleanup throws, the finalizer stays and the operation fails
/// with the exception's code (system_error) or errc::state_not_recoverable.
template <class Token = use_awaitable_t>
auto async_handle(const boost::asio::any_io_executor& ex, const dynamic_api& api, const unstructured& obj,
                  std::string_view finalizer, const cleanup_fn& cleanup, Token&& token = {}) {
  return kube::detail::initiate<result>(
      [api, obj, f = std::string(finalizer), c = cleanup, ex](kube::detail::completion<result> h) mutable {
        detail::start_handle(std::move(api), std::move(obj), std::move(f), std::move(c), std::move(ex), std::move(h));
      },
      std::forward<Token>(token));
}

}  // namespace kube::finalizers
