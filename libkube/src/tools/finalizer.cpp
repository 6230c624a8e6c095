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

asio::awaitable<unstructured> change(dynamic_api api, unstructured obj, std::string finalizer, bool add) {
  auto op = detail::change_finalizer(std::move(api), std::move(obj), std::move(finalizer), add);
  auto r = co_await std::move(op);
  co_return std::move(r.object);
}

asio::awaitable<result> handle(dynamic_api api, unstructured obj, std::string finalizer, cleanup_fn cleanup) {
  auto op = detail::handle_object(std::move(api), std::move(obj), std::move(finalizer), std::move(cleanup));
  auto r = co_await std::move(op);
  co_return result{r.action, std::move(r.object)};
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

}  // namespace

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

}  // namespace detail
}  // namespace kube::finalizers
