// Finalizer helper: guarded merge patches of metadata.finalizers (see finalizer.hpp).
#include <kube/detail/spawn.hpp>
#include <kube/exception.hpp>
#include <kube/tools/finalizer.hpp>

#include <boost/json/serialize.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <tuple>

namespace kube::finalizers {
namespace asio = boost::asio;
namespace json = boost::json;

std::vector<std::string> list(const unstructured& obj) {
  std::vector<std::string> out;
  const auto* md = obj.object().if_contains("metadata");
  if (!md || !md->is_object()) return out;
  const auto* f = md->as_object().if_contains("finalizers");
  if (!f || !f->is_array()) return out;
  for (const auto& v : f->as_array())
    if (v.is_string()) out.emplace_back(v.as_string());
  return out;
}

bool contains(const unstructured& obj, std::string_view finalizer) {
  const auto l = list(obj);
  return std::find(l.begin(), l.end(), finalizer) != l.end();
}

bool is_being_deleted(const unstructured& obj) { return obj.deletion_timestamp().has_value(); }

std::string guarded_patch(const unstructured& obj, const std::vector<std::string>& finalizers) {
  const auto rv = obj.resource_version();
  if (rv.empty())
    throw kube::error(client_errc::invalid_config,
                      "finalizers: object \"" + obj.name() +
                          "\" has no metadata.resourceVersion; pass the object as read from the server");
  json::array a;
  for (const auto& f : finalizers) a.emplace_back(f);
  json::object md{{"resourceVersion", rv}};
  if (a.empty())
    md["finalizers"] = nullptr;  // merge patch: remove the field
  else
    md["finalizers"] = std::move(a);
  return json::serialize(json::object{{"metadata", std::move(md)}});
}

namespace {

constexpr int max_rereads = 5;

void check_args(const unstructured& obj, const std::string& finalizer) {
  if (finalizer.empty()) throw kube::error(client_errc::invalid_config, "finalizers: the finalizer name is empty");
  if (obj.name().empty()) throw kube::error(client_errc::invalid_config, "finalizers: the object has no metadata.name");
}

bool is_api_error(const std::exception_ptr& e, api_errc code) {
  try {
    std::rethrow_exception(e);
  } catch (const kube::error& x) {
    return x.code() == code;
  } catch (...) {
    return false;
  }
}

// Adds (add=true) or removes our finalizer, rereading on conflict.
asio::awaitable<unstructured> change(dynamic_api api, unstructured obj, std::string finalizer, bool add) {
  check_args(obj, finalizer);
  const auto name = obj.name();
  for (int attempt = 0;; ++attempt) {
    auto next = list(obj);
    const auto it = std::find(next.begin(), next.end(), finalizer);
    if (add) {
      if (it != next.end() || is_being_deleted(obj)) co_return obj;
      next.push_back(finalizer);
    } else {
      if (it == next.end()) co_return obj;
      next.erase(std::remove(next.begin(), next.end(), finalizer), next.end());
    }
    const auto body = guarded_patch(obj, next);
    std::exception_ptr failure;
    try {
      co_return co_await api.async_patch(name, patch_type::merge, body);
    } catch (...) {
      failure = std::current_exception();
    }
    if (!add && is_api_error(failure, api_errc::not_found)) co_return unstructured{};
    if (!is_api_error(failure, api_errc::conflict) || attempt >= max_rereads) std::rethrow_exception(failure);
    // Someone else wrote first: read the object again and recompute the list.
    failure = nullptr;
    try {
      obj = co_await api.async_get(name);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) {
      if (!add && is_api_error(failure, api_errc::not_found)) co_return unstructured{};
      std::rethrow_exception(failure);
    }
  }
}

asio::awaitable<result> handle(dynamic_api api, unstructured obj, std::string finalizer, cleanup_fn cleanup) {
  check_args(obj, finalizer);
  result r;
  if (!is_being_deleted(obj)) {
    if (contains(obj, finalizer)) {
      r.object = std::move(obj);
      co_return r;
    }
    auto op = change(api, std::move(obj), finalizer, true);
    r.object = co_await std::move(op);
    r.action = contains(r.object, finalizer) ? action::added : action::none;
    co_return r;
  }
  if (!contains(obj, finalizer)) {
    r.object = std::move(obj);
    co_return r;
  }
  if (cleanup) {
    auto work = cleanup(obj);
    co_await std::move(work);
  }
  auto op = change(api, std::move(obj), finalizer, false);
  r.object = co_await std::move(op);
  r.action = action::finalized;
  co_return r;
}

// spawn_operation's `finish`: kube::error keeps its diagnostics; a
// cleanup's other exceptions are named in the client message.
struct finish_finalizer {
  template <class T>
  std::tuple<error_code, diagnostics, T> operator()(std::exception_ptr e, T value) const {
    error_code ec;
    diagnostics diag;
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const kube::error& x) {
        ec = x.code();
        diag = x.diag();
      } catch (const boost::system::system_error& x) {
        ec = x.code();
        diag.set_client_message(x.what());
      } catch (const std::exception& x) {
        ec = make_error_code(boost::system::errc::state_not_recoverable);
        diag.set_client_message(std::string("finalizers: cleanup failed: ") + x.what());
      } catch (...) {
        ec = make_error_code(boost::system::errc::state_not_recoverable);
        diag.set_client_message("finalizers: cleanup failed with an unknown exception");
      }
    }
    return {ec, std::move(diag), std::move(value)};
  }
};

} // namespace

namespace detail {

void start_ensure(dynamic_api api, unstructured obj, std::string finalizer, asio::any_io_executor ex,
                  kube::detail::completion<unstructured> h) {
  kube::detail::spawn_operation(ex, change(std::move(api), std::move(obj), std::move(finalizer), true), std::move(h),
                                finish_finalizer{});
}

void start_remove(dynamic_api api, unstructured obj, std::string finalizer, asio::any_io_executor ex,
                  kube::detail::completion<unstructured> h) {
  kube::detail::spawn_operation(ex, change(std::move(api), std::move(obj), std::move(finalizer), false), std::move(h),
                                finish_finalizer{});
}

void start_handle(dynamic_api api, unstructured obj, std::string finalizer, cleanup_fn cleanup,
                  asio::any_io_executor ex, kube::detail::completion<result> h) {
  kube::detail::spawn_operation(ex, handle(std::move(api), std::move(obj), std::move(finalizer), std::move(cleanup)),
                                std::move(h), finish_finalizer{});
}

} // namespace detail
} // namespace kube::finalizers
