// kube::api<T>: the verbs, type-erased. Each response body is parsed once
// (into a per-response arena) and decoded straight into the caller's object
// through T's codec function; the request machinery is kube::client's, the
// query parameters the dynamic client's (rest_params.hpp).
// Size: about 650 lines, one starter per verb over the same helpers (request,
// decode slot, completion); the list decoders and shared lists are in
// list_decoder.cpp and shared_list.cpp.
#include "codec/parse_json.hpp"
#include "codec/protobuf_meta.hpp"
#include "transport/client_impl.hpp"
#include "watch/watch_state.hpp"
#include "rest/rest_params.hpp"

#include <kube/rest/write_observer.hpp>

#include <kube/typed/api.hpp>
#include <kube/codec/codec_impl.hpp>
#include <kube/codec/proto_impl.hpp>
#include <kube/detail/list_decoder.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <charconv>
#include <optional>
#include <random>

namespace kube {
namespace asio = boost::asio;
namespace json = boost::json;

// ---- api_status codec ---------------------------------------------------------

void decode(const json::value& in, api_status& out, const json_path& at) {
  const auto& o = codec::expect_object(in, at);
  out = api_status{};
  const auto str = [&](std::string_view key, std::string& dst) {
    if (const auto* v = o.if_contains(key); v && !v->is_null()) {
      const json_path here{&at, key};
      codec::decode(*v, dst, here);
    }
  };
  str("status", out.status);
  str("reason", out.reason);
  str("message", out.message);
  if (const auto* c = o.if_contains("code"); c && !c->is_null()) {
    const json_path here{&at, "code"};
    std::int32_t code = 0;
    codec::decode(*c, code, here);
    out.code = code;
  }
  if (const auto* d = o.if_contains("details"); d && d->is_object()) {
    const auto& det = d->as_object();
    const json_path dp{&at, "details"};
    if (const auto* n = det.if_contains("name"); n && !n->is_null()) {
      const json_path here{&dp, "name"};
      codec::decode(*n, out.details_name, here);
    }
    if (const auto* u = det.if_contains("uid"); u && !u->is_null()) {
      const json_path here{&dp, "uid"};
      codec::decode(*u, out.details_uid, here);
    }
  }
}

void encode(const api_status& in, json::value& out) {
  auto& o = out.emplace_object();
  o["apiVersion"] = "v1";
  o["kind"] = "Status";
  if (!in.status.empty()) o["status"] = in.status;
  if (!in.reason.empty()) o["reason"] = in.reason;
  if (!in.message.empty()) o["message"] = in.message;
  if (in.code) o["code"] = in.code;
  if (!in.details_name.empty() || !in.details_uid.empty()) {
    json::object d;
    if (!in.details_name.empty()) d["name"] = in.details_name;
    if (!in.details_uid.empty()) d["uid"] = in.details_uid;
    o["details"] = std::move(d);
  }
}

namespace detail {
namespace {

std::string where(const typed_target& t, const std::string& ns, const std::string& name = {}) {
  std::string w = t.plural;
  if (!t.group.empty()) w += "." + t.group;
  if (!ns.empty()) w += " in namespace " + ns;
  if (!name.empty()) w += " \"" + name + "\"";
  return w;
}

// What a typed request accepts when it can read protobuf: as client-go's
// clientsets, protobuf first, JSON for what the server cannot send so.
constexpr std::string_view protobuf_or_json = "application/vnd.kubernetes.protobuf, application/json";

// `proto`: the answer's reader can read protobuf.
request base(const typed_target& t, const std::string& ns, bool list, bool proto) {
  request r;
  r.group(t.group).version(t.version).resource(t.plural).namespace_(t.namespaced ? ns : std::string());
  if (const auto& a = list ? t.accept_list : t.accept_object; !a.empty()) {
    r.accept(a);
  } else if (proto && t.protobuf) {
    r.accept(std::string(protobuf_or_json));
  }
  return r;
}

bool is_protobuf(const response& r) noexcept { return r.content_type.starts_with(codec::protobuf_media_type); }

// Reads a protobuf body (envelope, then the message) into `out`.
error_code read_protobuf_body(const std::string& body, codec::proto_read_fn read, codec::type_meta_fn type_meta,
                              void* out, const std::string& what, diagnostics& diag) {
  if (!read) {
    diag.set_client_message(what + ": the server answered in protobuf, which this type cannot read");
    return client_errc::decode_error;
  }
  try {
    const auto env = codec::open_envelope(body);
    codec::decode_protobuf(env.raw, read, out);
    if (type_meta) type_meta(out, env.api_version, env.kind);
    return {};
  } catch (const decode_error& e) {
    diag.set_client_message(what + ": " + e.what());
  }
  return client_errc::decode_error;
}

// A shared list page decoded as its body arrives (list_decoder), JSON or
// protobuf as the answer's Content-Type says.
struct list_page_consumer final : body_consumer {
  explicit list_page_consumer(const shared_list_sink& s)
      : sink(s) {}
  void start(std::string_view content_type) override {
    decoder.emplace(sink, content_type.starts_with(codec::protobuf_media_type));
  }
  void write(std::string_view bytes) override { decoder->write(bytes); }
  void finish() override { decoder->finish(); }
  shared_list_sink sink;
  std::optional<list_decoder> decoder;
};

// The object named by a decode error's path ".items[12]...", if any.
std::string item_named(const json::value& v, const std::string& path) {
  if (path.rfind(".items[", 0) != 0) return {};
  std::size_t i = 0;
  const char* b = path.data() + 7;
  const char* e = path.data() + path.size();
  if (std::from_chars(b, e, i).ec != std::errc{}) return {};
  const auto* items = v.is_object() ? v.as_object().if_contains("items") : nullptr;
  if (!items || !items->is_array() || i >= items->as_array().size()) return {};
  return detail::object_named(items->as_array()[i]);
}

// Decodes an already parsed value into `out` with `fn`.
error_code decode_value(const json::value& v, codec::decode_fn fn, void* out, const std::string& what,
                        diagnostics& diag) {
  try {
    const json_path root{};
    fn(v, out, root);
    return {};
  } catch (const decode_error& e) {
    diag.set_client_message(what + ": " + e.what() + item_named(v, e.path()));
  } catch (const std::exception& e) {
    diag.set_client_message(what + ": " + e.what());
  }
  return client_errc::decode_error;
}

// Parses a response body once, into `arena`.
error_code parse_body(const std::string& body, const std::string& what, json::value& v, json::storage_ptr arena,
                      diagnostics& diag) {
  boost::system::error_code jec;
  v = detail::parse_json(body, jec, std::move(arena));
  if (jec || !v.is_object()) {
    diag.set_client_message(what + ": the response is not a JSON object" + (jec ? " (" + jec.message() + ")" : ""));
    return client_errc::decode_error;
  }
  return {};
}

error_code decode_body(const std::string& body, codec::decode_fn fn, void* out, const std::string& what,
                       diagnostics& diag) {
  json::monotonic_resource mr;
  json::value v;
  if (auto ec = parse_body(body, what, v, &mr, diag)) return ec;
  return decode_value(v, fn, out, what, diag);
}

// Decodes a body straight from its text (no DOM); bad input is decoded again
// through the DOM, whose messages name the item and field path.
error_code read_body(const std::string& body, codec::read_fn read, codec::decode_fn fn, void* out,
                     const std::string& what, diagnostics& diag) {
  if (read) {
    try {
      codec::read_text(body, read, out);
      return {};
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): reported by the DOM path below
    }
  }
  return decode_body(body, fn, out, what, diag);
}

void complete_now(const typed_ptr& t, typed_completion h, error_code ec, diagnostics diag) {
  spawn_operation(
      detail::client_access::impl(t->c)->strand,
      [ec, diag = std::move(diag)]() -> asio::awaitable<result<typed_done>> {
        co_return result<typed_done>{ec, diag, {}};
      },
      std::move(h), finish_result{});
}

// A unary request whose body `decode` turns into the caller's value.
template <class Decode>
void unary(const typed_ptr& t, request req, std::string what, Decode decode, typed_completion h) {
  const auto& impl = detail::client_access::impl(t->c);
  spawn_operation(
      impl->strand,
      [impl, req = std::move(req), what = std::move(what),
       decode = std::move(decode)]() mutable -> asio::awaitable<result<typed_done>> {
        auto r = co_await impl->run(req);
        result<typed_done> out{r.ec, std::move(r.diag), {}};
        if (!out.ec) out.ec = decode(r.value, what, out.diag);
        co_return out;
      },
      std::move(h), finish_result{});
}

auto into(decode_slot slot) {
  return [slot = std::move(slot)](const response& r, const std::string& what, diagnostics& diag) {
    if (is_protobuf(r)) return read_protobuf_body(r.body, slot.proto_read, slot.type_meta, slot.out, what, diag);
    return read_body(r.body, slot.read, slot.decode, slot.out, what, diag);
  };
}

// into() for a write: a decoded answer is also told to the client's write
// observers (kube/rest/write_observer.hpp).
// A dry run stores nothing: nobody is told.
auto into_written(decode_slot slot, const typed_ptr& t, bool dry_run) {
  return [slot = std::move(slot), t, dry_run](const response& r, const std::string& what, diagnostics& diag) {
    const error_code ec = into(slot)(r, what, diag);
    if (!ec && !dry_run && slot.identity != nullptr) {
      const object_identity o = slot.identity(slot.out);
      detail::client_access::impl(t->c)->note_written(
          {t->group, t->plural, o.namespace_, o.name, o.resource_version, o.labels});
    }
    return ec;
  };
}

// The namespace an operation addresses, or an error for a namespaced kind
// without one. `object_ns` is the body's metadata.namespace (writes).
error_code resolve(const typed_target& t, const std::string& verb, const std::string& name,
                   const std::string& object_ns, std::string& ns, std::string& what, diagnostics& diag,
                   bool need_name = true) {
  ns = !t.namespaced ? std::string() : !t.namespace_name.empty() ? t.namespace_name : object_ns;
  what = verb + " " + where(t, ns, name);
  if (need_name && name.empty()) {
    diag.set_client_message(what + ": the object name is empty");
    return client_errc::invalid_config;
  }
  if (t.namespaced && ns.empty()) {
    diag.set_client_message(what + ": " + t.kind +
                            " is namespaced: use an api bound to a namespace (or set metadata.namespace)");
    return client_errc::invalid_config;
  }
  return {};
}

}  // namespace

bool client_allows_protobuf(const client& c) noexcept { return !client_access::impl(c)->settings.json_only; }

bool encode_body_protobuf(codec::proto_write_fn enc, const void* obj, std::string_view api_version,
                          std::string_view kind, typed_body& out) {
  bool lossy = false;
  auto raw = codec::encode_protobuf(enc, obj, &lossy);
  if (lossy) return false;
  out.body = codec::seal_envelope(api_version, kind, raw);
  out.content_type = std::string(codec::protobuf_media_type);
  return true;
}

void check_typed_target(const typed_target& t) {
  if (!t.namespaced && !t.namespace_name.empty())
    throw kube::error(client_errc::invalid_config, t.kind + " is cluster-scoped: construct api<" + t.kind +
                                                       "> without a namespace (got \"" + t.namespace_name + "\")");
}

typed_body encode_body(codec::encode_fn enc, const void* obj, std::string_view api_version, std::string_view kind) {
  json::value v;
  enc(obj, v);
  typed_body out;
  if (auto* o = v.if_object()) {
    const auto fill = [&](std::string_view key, std::string_view value) {
      if (value.empty()) return;
      auto* cur = o->if_contains(key);
      if (!cur || cur->is_null() || (cur->is_string() && cur->as_string().empty())) (*o)[key] = value;
    };
    fill("apiVersion", api_version);
    fill("kind", kind);
    if (const auto* md = o->if_contains("metadata"); md && md->is_object()) {
      if (const auto* n = md->as_object().if_contains("name"); n && n->is_string()) out.name = n->as_string();
      if (const auto* ns = md->as_object().if_contains("namespace"); ns && ns->is_string())
        out.namespace_name = ns->as_string();
    }
  }
  out.body = json::serialize(v);
  return out;
}

void typed_get(typed_ptr t, std::string name, std::string subresource, decode_slot out, typed_completion h) {
  std::string ns, what;
  diagnostics diag;
  if (auto ec = resolve(*t, subresource.empty() ? "get" : "get " + subresource + " of", name, {}, ns, what, diag))
    return complete_now(t, std::move(h), ec, std::move(diag));
  auto req = base(*t, ns, false, out.proto_read != nullptr);
  req.name(name).subresource(subresource);
  unary(t, std::move(req), std::move(what), into(std::move(out)), std::move(h));
}

void typed_list(typed_ptr t, list_params p, bool all_pages, list_slot out, typed_completion h) {
  const auto& impl = detail::client_access::impl(t->c);
  spawn_operation(
      impl->strand,
      [impl, t, p = std::move(p), all_pages, out = std::move(out)]() mutable -> asio::awaitable<result<typed_done>> {
        const auto what = "list " + where(*t, t->namespaced ? t->namespace_name : std::string());
        result<typed_done> res;
        if (all_pages && !p.limit) p.limit = 500;
        bool first = true;
        for (;;) {
          auto req = base(*t, t->namespace_name, true, out.proto_read != nullptr);
          add_list_params(req, p);
          std::shared_ptr<void> page;  // pages after the first are appended to the result
          void* into = out.out;
          if (!first) {
            page = out.make_page();
            into = page.get();
          }
          // Shared lists are decoded item by item as the body arrives.
          std::optional<list_page_consumer> streamed;
          if (out.shared_sink) streamed.emplace(out.shared_sink(into));
          auto r = co_await impl->run(req, streamed ? &*streamed : nullptr);
          if (r.ec == client_errc::decode_error && streamed) {
            res.ec = r.ec;
            res.diag = std::move(r.diag);
            res.diag.set_client_message(what + ": " + res.diag.client_message());
            co_return res;
          }
          if (r.ec) {
            // An expired continue token: start over with one unpaginated
            // list, as client-go's pager does.
            if (all_pages && !first && is_resource_expired(r.ec)) {
              p.continue_token.clear();
              p.limit.reset();
              out.clear(out.out);
              first = true;
              continue;
            }
            res.ec = r.ec;
            res.diag = std::move(r.diag);
            co_return res;
          }
          if (!streamed) {
            res.ec = is_protobuf(r.value)
                         ? read_protobuf_body(r.value.body, out.proto_read, out.type_meta, into, what, res.diag)
                         : read_body(r.value.body, out.read, out.decode, into, what, res.diag);
          }
          r.value.body = std::string();  // the page's text is not needed while the next one is read
          if (res.ec) co_return res;
          std::string next = out.take_continue(into, all_pages);
          if (page) out.append(out.out, page.get());
          first = false;
          if (!all_pages || next.empty()) co_return res;
          p.continue_token = std::move(next);
        }
      },
      std::move(h), finish_result{});
}

void typed_create(typed_ptr t, typed_body body, std::string name, std::string subresource, write_params p,
                  decode_slot out, typed_completion h) {
  std::string ns, what;
  diagnostics diag;
  const bool sub = !subresource.empty();
  // POST to the collection: the name is the body's (may be empty with generateName).
  const std::string target = sub ? name : body.name;
  if (auto ec = resolve(*t, sub ? "create " + subresource + " of" : "create", target, body.namespace_name, ns, what,
                        diag, sub))
    return complete_now(t, std::move(h), ec, std::move(diag));
  auto req = base(*t, ns, false, out.proto_read != nullptr);
  if (sub) req.name(target).subresource(subresource);
  req.method(http_method::post).body(std::move(body.body), std::move(body.content_type));
  add_write_params(req, p.field_manager, p.dry_run, p.field_validation);
  unary(t, std::move(req), std::move(what), into_written(std::move(out), t, p.dry_run), std::move(h));
}

void typed_replace(typed_ptr t, typed_body body, std::string name, std::string subresource, write_params p,
                   decode_slot out, typed_completion h) {
  std::string ns, what;
  diagnostics diag;
  const std::string target = name.empty() ? body.name : name;
  if (auto ec = resolve(*t, subresource.empty() ? "replace" : "replace " + subresource + " of", target,
                        body.namespace_name, ns, what, diag))
    return complete_now(t, std::move(h), ec, std::move(diag));
  auto req = base(*t, ns, false, out.proto_read != nullptr);
  req.method(http_method::put)
      .name(target)
      .subresource(subresource)
      .body(std::move(body.body), std::move(body.content_type));
  add_write_params(req, p.field_manager, p.dry_run, p.field_validation);
  unary(t, std::move(req), std::move(what), into_written(std::move(out), t, p.dry_run), std::move(h));
}

void typed_patch(typed_ptr t, std::string name, patch_type type, std::string body, std::string subresource,
                 patch_params p, decode_slot out, typed_completion h) {
  std::string ns, what;
  diagnostics diag;
  std::string body_ns;
  if (type == patch_type::apply && t->namespaced && t->namespace_name.empty()) {
    // Apply from an all-namespaces api: the body's metadata.namespace.
    boost::system::error_code jec;
    auto v = detail::parse_json(body, jec);
    if (!jec && v.is_object())
      if (const auto* md = v.as_object().if_contains("metadata"); md && md->is_object())
        if (const auto* n = md->as_object().if_contains("namespace"); n && n->is_string()) body_ns = n->as_string();
  }
  if (auto ec =
          resolve(*t, subresource.empty() ? "patch" : "patch " + subresource + " of", name, body_ns, ns, what, diag))
    return complete_now(t, std::move(h), ec, std::move(diag));
  if (type == patch_type::apply && p.field_manager.empty()) {
    diag.set_client_message(what + ": server-side apply needs patch_params.field_manager");
    return complete_now(t, std::move(h), client_errc::invalid_config, std::move(diag));
  }
  auto req = base(*t, ns, false, out.proto_read != nullptr);
  req.method(http_method::patch).name(name).subresource(subresource).body(std::move(body), content_type_of(type));
  add_write_params(req, p.field_manager, p.dry_run, p.field_validation);
  if (p.force) req.param("force", "true");
  unary(t, std::move(req), std::move(what), into_written(std::move(out), t, p.dry_run), std::move(h));
}

namespace {
auto into_delete(delete_slot slot) {
  return [slot = std::move(slot)](const response& r, const std::string& what, diagnostics& diag) -> error_code {
    const auto& body = r.body;
    if (is_protobuf(r)) {
      codec::protobuf_envelope env;
      try {
        env = codec::open_envelope(body);
        if (env.kind == "Status" && slot.object_kind != "Status") {
          return decode_value(status_from_protobuf(env.raw), &codec::decode_erased<api_status>,
                              slot.emplace_status(slot.result), what, diag);
        }
      } catch (const decode_error& e) {
        diag.set_client_message(what + ": " + e.what());
        return client_errc::decode_error;
      }
      return read_protobuf_body(body, slot.proto_read, slot.type_meta, slot.emplace_object(slot.result), what, diag);
    }
    json::monotonic_resource mr;
    json::value v;
    if (auto ec = parse_body(body, what, v, &mr, diag)) return ec;
    const auto* kind = v.as_object().if_contains("kind");
    const bool status = kind && kind->is_string() && kind->as_string() == "Status" && slot.object_kind != "Status";
    if (status) return decode_value(v, &codec::decode_erased<api_status>, slot.emplace_status(slot.result), what, diag);
    return decode_value(v, slot.decode, slot.emplace_object(slot.result), what, diag);
  };
}
}  // namespace

void typed_delete(typed_ptr t, std::string name, delete_params p, delete_slot out, typed_completion h) {
  std::string ns, what;
  diagnostics diag;
  if (auto ec = resolve(*t, "delete", name, {}, ns, what, diag))
    return complete_now(t, std::move(h), ec, std::move(diag));
  auto req = base(*t, ns, false, out.proto_read != nullptr);
  req.method(http_method::delete_).name(name).body(delete_options(p));
  unary(t, std::move(req), std::move(what), into_delete(std::move(out)), std::move(h));
}

void typed_delete_collection(typed_ptr t, list_params lp, delete_params dp, delete_slot out, typed_completion h) {
  auto req = base(*t, t->namespace_name, true, out.proto_read != nullptr);
  req.method(http_method::delete_).body(delete_options(dp));
  add_list_params(req, lp);
  unary(t, std::move(req), "delete collection " + where(*t, t->namespaced ? t->namespace_name : std::string()),
        into_delete(std::move(out)), std::move(h));
}

void typed_evict(typed_ptr t, std::string name, delete_params p, std::shared_ptr<api_status> out, typed_completion h) {
  std::string ns, what;
  diagnostics diag;
  if (auto ec = resolve(*t, "evict", name, {}, ns, what, diag))
    return complete_now(t, std::move(h), ec, std::move(diag));
  json::object body{
      {"apiVersion", "policy/v1"}, {"kind", "Eviction"}, {"metadata", json::object{{"name", name}, {"namespace", ns}}}};
  auto opts = json::parse(delete_options(p));
  body["deleteOptions"] = std::move(opts);
  auto req = base(*t, ns, false, false);
  req.method(http_method::post).name(name).subresource("eviction").body(json::serialize(body));
  unary(t, std::move(req), std::move(what), into(make_decode_slot(std::move(out))), std::move(h));
}

// ---- watch ------------------------------------------------------------------

namespace {

// `what()` names the watch in an error ("watch pods in namespace a"); it is
// called only when an event is refused, so a good event builds no text.
template <class What>
error_code translate_event(watch_event& ev, const event_slot& out, const What& what, diagnostics& diag) {
  if (ev.type == watch_event_type::error) {
    auto ec = watch_event_error(ev, diag);
    return ec ? ec : error_code(api_errc::unknown);
  }
  const event_object_ops& ops = *out.ops;
  *out.type = ev.type;
  out.resource_version->clear();
  if (out.initial_events_end) *out.initial_events_end = false;
  // The object to fill: the caller's, or, for a shared event, a new T
  // handed over at once (when the decoder's own cannot be).
  void* object = out.object;
  const auto fresh = [&] {
    auto p = ops.make();
    object = p.get();
    ops.share(out.shared, std::move(p));
  };
  if (ev.decoded) {
    // Read into T by the watch decoder already (see typed_watch_open).
    if (!ev.decoded_type || *ev.decoded_type != *ops.type || !ops.resource_version_of) {
      diag.set_client_message(what() + ": " + std::string(to_string(ev.type)) +
                              " event decoded into another type than the watch's");
      return client_errc::decode_error;
    }
    const bool copy = ev.decoded.use_count() > 1;  // copies of the event share it
    if (out.shared && !copy) {
      object = ev.decoded.get();
      ops.share(out.shared, std::move(ev.decoded));
    } else {
      if (out.shared) fresh();
      ops.take(object, ev.decoded.get(), copy);
    }
    *out.resource_version = ops.resource_version_of(object);
    return {};
  }
  if (out.shared) fresh();
  if (!ev.object_text.empty()) {
    // A raw-objects stream: straight from the text into T, no DOM.
    std::string read_error;
    if (ops.resource_version_of) {
      try {
        codec::read_text(ev.object_text, ops.read, object);
        *out.resource_version = ops.resource_version_of(object);
        return {};
      } catch (const std::exception& e) {  // the DOM path below reports it, with the object's name
        read_error = e.what();
      }
    }
    // The decoder checked the grammar; what it does not check is refused
    // here: a number too large for a double (1e999).
    error_code jec;
    auto parsed = detail::parse_json(ev.object_text, jec);
    if (jec || !parsed.is_object()) {
      diag.set_client_message(
          what() + ": " + std::string(to_string(ev.type)) +
          " event: " + (read_error.empty() ? "the object does not read as JSON (" + jec.message() + ")" : read_error));
      return client_errc::decode_error;
    }
    ev.object = std::move(parsed.as_object());
  }
  const json::object* md = nullptr;
  if (const auto* m = ev.object.if_contains("metadata"); m && m->is_object()) md = &m->as_object();
  if (md) {
    if (const auto* rv = md->if_contains("resourceVersion"); rv && rv->is_string())
      *out.resource_version = rv->as_string();
  }
  if (ev.type == watch_event_type::bookmark) {
    // The bookmark that ends a streaming list's initial events
    // (metav1.InitialEventsAnnotationKey).
    if (md && out.initial_events_end) {
      if (const auto* a = md->if_contains("annotations"); a && a->is_object()) {
        const auto* end = a->as_object().if_contains("k8s.io/initial-events-end");
        *out.initial_events_end = end && end->is_string() && end->as_string() == "true";
      }
    }
    return {};
  }
  const json::value v(std::move(ev.object));
  try {
    const json_path root{};
    ops.decode(v, object, root);
    return {};
  } catch (const std::exception&) {
    // Built only on failure: the watch hot path allocates nothing for messages.
    std::string w = what();
    w += ": ";
    w += to_string(ev.type);
    if (const auto* m = v.as_object().if_contains("metadata"); m && m->is_object())
      if (const auto* n = m->as_object().if_contains("name"); n && n->is_string())
        w += " \"" + std::string(n->as_string()) + "\"";
    return decode_value(v, ops.decode, object, w, diag);
  }
}

}  // namespace

error_code translate_watch_event(watch_event& ev, const event_slot& out, std::string_view what, diagnostics& diag) {
  return translate_event(
      ev, out, [what] { return std::string(what); }, diag);
}

void typed_watch_open(typed_ptr t, watch_params p, std::shared_ptr<watch_stream> out, typed_completion h) {
  const auto& impl = detail::client_access::impl(t->c);
  auto req = base(*t, t->namespace_name, false, t->objects.proto_read != nullptr);
  add_watch_params(req, p);
  spawn_operation(
      impl->strand,
      [impl, req = std::move(req), out = std::move(out), objects = t->objects,
       idle = p.idle_timeout]() mutable -> asio::awaitable<result<typed_done>> {
        // Objects read straight into T from the text, as each event is framed.
        auto r =
            co_await open_watch(impl, std::move(req), {.raw_objects = true, .objects = objects, .idle_timeout = idle});
        if (!r.ec) *out = std::move(r.value);
        co_return result<typed_done>{r.ec, std::move(r.diag), {}};
      },
      std::move(h), finish_result{});
}

void typed_watch_next(typed_ptr t, watch_stream w, event_slot out, typed_completion h) {
  const auto& state = watch_stream_access::state(w);
  if (!t || !state) {
    auto ex = asio::get_associated_executor(h);
    ex.execute([h = std::move(h)]() mutable {
      diagnostics d;
      d.set_client_message("async_next on an empty typed_watch_stream");
      std::move(h)(error_code(client_errc::watch_stream_error), std::move(d), typed_done{});
    });
    return;
  }
  // Translated on the client's strand as the event comes off the stream.
  auto deliver = [t, out = std::move(out)](result<watch_event> ev) {
    result<typed_done> res;
    if (ev.ec) {
      res.ec = ev.ec;
      res.diag = std::move(ev.diag);
    } else {
      const auto what = [&t] { return "watch " + where(*t, t->namespaced ? t->namespace_name : std::string()); };
      res.ec = translate_event(ev.value, out, what, res.diag);
    }
    return finish_result{}(nullptr, std::move(res));
  };
  state->async_next(make_watch_waiter(std::move(h), std::move(deliver), state->strand()));
}

// ---- retry ---------------------------------------------------------------------

asio::awaitable<void> retry_sleep(std::chrono::nanoseconds d) {
  asio::steady_timer timer(co_await asio::this_coro::executor, d);
  co_await timer.async_wait(asio::use_awaitable);
}

double retry_random() noexcept {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

}  // namespace detail
}  // namespace kube
