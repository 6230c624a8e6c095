#include "codec/parse_json.hpp"
#include "transport/client_impl.hpp"
#include "rest/rest_params.hpp"

#include <kube/dynamic/dynamic_api.hpp>
#include <kube/rest/write_observer.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace kube::detail {
namespace asio = boost::asio;

namespace {

request base(const dynamic_target& t) {
  request r;
  r.group(t.gvr.group).version(t.gvr.version).resource(t.gvr.resource).namespace_(t.namespace_name);
  return r;
}

std::string where(const dynamic_target& t, const std::string& name = {}) {
  std::string w = t.gvr.resource;
  if (!t.gvr.group.empty()) w += "." + t.gvr.group;
  if (!t.namespace_name.empty()) w += " in namespace " + t.namespace_name;
  if (!name.empty()) w = w + " \"" + name + "\"";
  return w;
}

error_code parse_object(const std::string& body, const std::string& what, boost::json::object& out, diagnostics& diag) {
  boost::system::error_code jec;
  auto v = detail::parse_json(body, jec);
  if (jec || !v.is_object()) {
    diag.set_client_message(what + ": the response is not a JSON object" + (jec ? " (" + jec.message() + ")" : ""));
    return client_errc::decode_error;
  }
  out = std::move(v.as_object());
  return {};
}

error_code decode_list(const std::string& body, const std::string& what, unstructured_list& out, diagnostics& diag) {
  boost::json::object o;
  if (auto ec = parse_object(body, what, o, diag)) return ec;
  auto* items = o.if_contains("items");
  if (!items || !(items->is_array() || items->is_null())) {
    diag.set_client_message(what + ": the list has no items array");
    return client_errc::decode_error;
  }
  if (items->is_array()) {
    std::size_t i = 0;
    for (auto& item : items->as_array()) {
      if (!item.is_object()) {
        diag.set_client_message(what + ": items[" + std::to_string(i) + "] is not an object");
        return client_errc::decode_error;
      }
      out.items.emplace_back(std::move(item.as_object()));
      ++i;
    }
  }
  if (const auto* md = o.if_contains("metadata"); md && md->is_object()) {
    const auto& m = md->as_object();
    if (const auto* rv = m.if_contains("resourceVersion"); rv && rv->is_string())
      out.resource_version = rv->as_string();
    if (const auto* c = m.if_contains("continue"); c && c->is_string()) out.continue_token = c->as_string();
    if (const auto* r = m.if_contains("remainingItemCount"); r && r->is_int64())
      out.remaining_item_count = r->as_int64();
  }
  return {};
}

}  // namespace

void add_list_params(request& r, const list_params& p) {
  if (!p.label_selector.empty()) r.param("labelSelector", p.label_selector);
  if (!p.field_selector.empty()) r.param("fieldSelector", p.field_selector);
  if (p.limit) r.param("limit", std::to_string(*p.limit));
  if (!p.continue_token.empty()) r.param("continue", p.continue_token);
  if (!p.resource_version.empty()) r.param("resourceVersion", p.resource_version);
  if (!p.resource_version_match.empty()) r.param("resourceVersionMatch", p.resource_version_match);
  if (p.timeout_seconds) r.param("timeoutSeconds", std::to_string(*p.timeout_seconds));
}

void add_write_params(request& r, const std::string& field_manager, bool dry_run, const std::string& validation) {
  if (!field_manager.empty()) r.param("fieldManager", field_manager);
  if (dry_run) r.param("dryRun", "All");
  if (!validation.empty()) r.param("fieldValidation", validation);
}

std::string delete_options(const delete_params& p) {
  boost::json::object o{{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (!p.propagation_policy.empty()) o["propagationPolicy"] = p.propagation_policy;
  if (p.grace_period_seconds) o["gracePeriodSeconds"] = *p.grace_period_seconds;
  if (!p.precondition_uid.empty() || !p.precondition_resource_version.empty()) {
    boost::json::object pre;
    if (!p.precondition_uid.empty()) pre["uid"] = p.precondition_uid;
    if (!p.precondition_resource_version.empty()) pre["resourceVersion"] = p.precondition_resource_version;
    o["preconditions"] = std::move(pre);
  }
  if (p.dry_run) o["dryRun"] = boost::json::array{"All"};
  return boost::json::serialize(o);
}

void add_watch_params(request& req, const watch_params& p) {
  req.param("watch", "true");
  if (!p.label_selector.empty()) req.param("labelSelector", p.label_selector);
  if (!p.field_selector.empty()) req.param("fieldSelector", p.field_selector);
  if (!p.resource_version.empty()) req.param("resourceVersion", p.resource_version);
  if (p.allow_bookmarks) req.param("allowWatchBookmarks", "true");
  if (p.timeout_seconds) req.param("timeoutSeconds", std::to_string(*p.timeout_seconds));
  if (p.send_initial_events) req.param("sendInitialEvents", "true");
  if (!p.resource_version_match.empty()) req.param("resourceVersionMatch", p.resource_version_match);
}

namespace {

// A unary request whose body decodes into an unstructured object. A write
// (`written`: not a dry run) is told to the client's write observers.
void object_op(const dyn& t, request req, std::string what, completion<unstructured> h, bool written = false) {
  const auto& impl = detail::client_access::impl(t->c);
  spawn_operation(
      impl->strand,
      [impl, t, req = std::move(req), what = std::move(what), written]() -> asio::awaitable<result<unstructured>> {
        auto r = co_await impl->run(req);
        result<unstructured> out{r.ec, std::move(r.diag), {}};
        if (!out.ec) out.ec = parse_object(r.value.body, what, out.value.object(), out.diag);
        if (!out.ec && written) {
          const unstructured& o = out.value;
          const string_map<std::string> labels(o.labels());
          impl->note_written({t->gvr.group, t->gvr.resource, o.namespace_(), o.name(), o.resource_version(), &labels});
        }
        co_return out;
      },
      std::move(h), finish_result{});
}

error_code need_name(const std::string& name, const std::string& what, diagnostics& diag) {
  if (!name.empty()) return {};
  diag.set_client_message(what + ": metadata.name is empty");
  return client_errc::invalid_config;
}

void fail_now(const dyn& t, completion<unstructured> h, error_code ec, diagnostics diag) {
  spawn_operation(
      detail::client_access::impl(t->c)->strand,
      [ec, diag]() -> asio::awaitable<result<unstructured>> {
        co_return result<unstructured>{ec, diag, {}};
      },
      std::move(h), finish_result{});
}

}  // namespace

void dynamic_get(dyn t, std::string name, std::string subresource, completion<unstructured> h) {
  auto req = base(*t);
  req.name(name).subresource(subresource);
  object_op(t, std::move(req), "get " + where(*t, name), std::move(h));
}

void dynamic_list(dyn t, list_params p, bool all_pages, completion<unstructured_list> h) {
  const auto& impl = detail::client_access::impl(t->c);
  spawn_operation(
      impl->strand,
      [impl, t, p = std::move(p), all_pages]() mutable -> asio::awaitable<result<unstructured_list>> {
        const auto what = "list " + where(*t);
        result<unstructured_list> out;
        if (all_pages && !p.limit) p.limit = 500;
        bool first = true;
        for (;;) {
          auto req = base(*t);
          add_list_params(req, p);
          auto r = co_await impl->run(req);
          if (r.ec) {
            // An expired continue token: start over with one unpaginated list
            // at the same resourceVersion semantics (client-go's pager does so).
            if (all_pages && !first && is_resource_expired(r.ec)) {
              p.continue_token.clear();
              p.limit.reset();
              out.value.items.clear();
              first = true;
              continue;
            }
            out.ec = r.ec;
            out.diag = std::move(r.diag);
            co_return out;
          }
          unstructured_list page;
          if ((out.ec = decode_list(r.value.body, what, page, out.diag))) co_return out;
          if (first) out.value.resource_version = page.resource_version;
          first = false;
          for (auto& i : page.items) out.value.items.push_back(std::move(i));
          out.value.continue_token = page.continue_token;
          out.value.remaining_item_count = page.remaining_item_count;
          if (!all_pages || page.continue_token.empty()) co_return out;
          p.continue_token = page.continue_token;
        }
      },
      std::move(h), finish_result{});
}

void dynamic_watch(dyn t, watch_params p, completion<watch_stream> h) {
  auto req = base(*t);
  add_watch_params(req, p);
  start_watch(detail::client_access::impl(t->c), std::move(req), p.idle_timeout, std::move(h));
}

void dynamic_create(dyn t, unstructured obj, write_params p, completion<unstructured> h) {
  auto req = base(*t);
  req.method(http_method::post).body(obj.to_json());
  add_write_params(req, p.field_manager, p.dry_run, p.field_validation);
  object_op(t, std::move(req), "create " + where(*t, obj.name()), std::move(h), !p.dry_run);
}

void dynamic_replace(dyn t, unstructured obj, std::string subresource, write_params p, completion<unstructured> h) {
  const auto what = "replace " + where(*t, obj.name());
  diagnostics diag;
  if (auto ec = need_name(obj.name(), what, diag)) return fail_now(t, std::move(h), ec, std::move(diag));
  auto req = base(*t);
  req.method(http_method::put).name(obj.name()).subresource(subresource).body(obj.to_json());
  add_write_params(req, p.field_manager, p.dry_run, p.field_validation);
  object_op(t, std::move(req), what, std::move(h), !p.dry_run);
}

void dynamic_patch(dyn t, std::string name, patch_type type, std::string body, std::string subresource, patch_params p,
                   completion<unstructured> h) {
  const auto what = "patch " + where(*t, name);
  diagnostics diag;
  if (auto ec = need_name(name, what, diag)) return fail_now(t, std::move(h), ec, std::move(diag));
  if (type == patch_type::apply && p.field_manager.empty()) {
    diag.set_client_message(what + ": server-side apply needs patch_params.field_manager");
    return fail_now(t, std::move(h), client_errc::invalid_config, std::move(diag));
  }
  auto req = base(*t);
  req.method(http_method::patch).name(name).subresource(subresource).body(std::move(body), content_type_of(type));
  add_write_params(req, p.field_manager, p.dry_run, p.field_validation);
  if (p.force) req.param("force", "true");
  object_op(t, std::move(req), what, std::move(h), !p.dry_run);
}

void dynamic_delete(dyn t, std::string name, delete_params p, completion<unstructured> h) {
  const auto what = "delete " + where(*t, name);
  diagnostics diag;
  if (auto ec = need_name(name, what, diag)) return fail_now(t, std::move(h), ec, std::move(diag));
  auto req = base(*t);
  req.method(http_method::delete_).name(name).body(delete_options(p));
  object_op(t, std::move(req), what, std::move(h));
}

void dynamic_delete_collection(dyn t, list_params lp, delete_params dp, completion<unstructured> h) {
  auto req = base(*t);
  req.method(http_method::delete_).body(delete_options(dp));
  add_list_params(req, lp);
  object_op(t, std::move(req), "delete collection " + where(*t), std::move(h));
}

}  // namespace kube::detail
