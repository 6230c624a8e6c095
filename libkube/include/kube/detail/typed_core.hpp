#pragma once

// Internal: the type-erased core of kube::api<T>. The operations live in
// compiled code (libkube/src/typed/) and know T only through the codec's
// function pointers (codec::decode_fn / encode_fn) and a few small
// captureless adapters instantiated here (append list items, emplace an
// optional). Each operation decodes the response body once, straight into
// the caller's object, which the completion adapter then moves out.

#include <kube/codec/codec.hpp>
#include <kube/codec/string_map.hpp>
#include <kube/typed/resource.hpp>
#include <kube/rest/client.hpp>
#include <kube/detail/initiate.hpp>
#include <kube/detail/watch_decoder.hpp>
#include <kube/rest/list_params.hpp>
#include <kube/typed/results.hpp>

#include <concepts>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace kube {

namespace detail {

/// What the compiled operations know about api<T>: the resource's REST
/// coordinates and the namespace the api is bound to.
struct typed_target {
  client c;
  std::string group, version, api_version, kind, plural;
  bool namespaced = true;
  std::string namespace_name;  ///< empty: cluster-scoped, or all namespaces
  /// Accept header of requests answered by one object (get, watch, writes)
  /// and by a list (list, delete_collection); empty: application/json.
  /// The metadata client asks for PartialObjectMetadata(List) here.
  std::string accept_object, accept_list;
  /// How a watch's decoder reads objects straight into the type as each
  /// event is framed; unset (types without resource_version()): the event
  /// keeps the text.
  watch_decoder_params::object_reader objects{};
  /// Ask for protobuf (the type has a protobuf codec, the client was not
  /// told json_only, no accept_object/accept_list override).
  bool protobuf = false;
};
using typed_ptr = std::shared_ptr<const typed_target>;

/// T has the resource_version() accessor generated resource kinds have.
template <class T>
concept has_resource_version = requires(const T& o) {
  std::string_view(o.resource_version());
};

template <class T>
std::shared_ptr<void> make_object() {
  return std::make_shared<T>();
}

/// Whether requests of this client may ask for protobuf (client_params::json_only).
bool client_allows_protobuf(const client& c) noexcept;

template <class T>
constexpr codec::proto_read_fn proto_reader_of() noexcept {
  if constexpr (has_protobuf<T>) {
    return &codec::read_proto_erased<T>;
  } else {
    return nullptr;
  }
}

/// How a watch decoder reads objects of T as it frames each event, from
/// JSON text or from protobuf.
template <class T>
watch_decoder_params::object_reader object_reader_of() {
  return {&make_object<T>, &codec::read_erased<T>, &typeid(T), proto_reader_of<T>(), &codec::type_meta_erased<T>};
}

template <class T>
typed_ptr make_typed_target(client c, std::string ns) {
  using tr = resource_traits<T>;
  auto t =
      std::make_shared<typed_target>(typed_target{std::move(c), {}, {}, {}, {}, {}, true, std::move(ns), {}, {}, {}});
  t->group = tr::group;
  t->version = tr::version;
  t->api_version = t->group.empty() ? t->version : t->group + "/" + t->version;
  t->kind = tr::kind;
  t->plural = tr::plural;
  t->namespaced = tr::namespaced;
  if constexpr (has_resource_version<T>) {
    t->objects = object_reader_of<T>();
  }
  t->protobuf = has_protobuf<T> && client_allows_protobuf(t->c);
  return t;
}

/// Throws kube::error(invalid_config) for a namespace given to a cluster-scoped api.
void check_typed_target(const typed_target& t);

/// Compiled operations complete with this; the decoded value is already in
/// the caller's object.
struct typed_done {};
using typed_completion = completion<typed_done>;

/// What a write observer is told of a written object.
struct object_identity {
  std::string_view namespace_, name, resource_version;
  const string_map<std::string>* labels = nullptr;  ///< null: the type has none to show
};

/// An accessor whose string outlives the call (a view into the object, or
/// a reference to its member): what object_identity may keep.
template <class S>
concept stable_text = std::is_same_v<S, std::string_view> || std::is_lvalue_reference_v<S>;

/// A type whose labels() is a reference to its label map (the generated
/// types'). A concept of its own: clang 16 crashes on this requirement
/// written inline in make_decode_slot's lambda.
template <class R>
concept has_label_map = requires(const R& o) {
  { o.labels() } -> std::same_as<const string_map<std::string>&>;
};

/// Where a decoded body goes.
struct decode_slot {
  codec::decode_fn decode = nullptr;
  codec::read_fn read = nullptr;              ///< straight from the text; decode reports bad input
  codec::proto_read_fn proto_read = nullptr;  ///< a protobuf body; nullptr: ask for JSON only
  codec::type_meta_fn type_meta = nullptr;    ///< apiVersion and kind of a protobuf body
  void* out = nullptr;
  std::shared_ptr<void> keep;  ///< keeps *out alive while the operation runs
  /// The decoded object's namespace, name and resourceVersion (types that
  /// have them), for the write observers.
  object_identity (*identity)(const void* out) = nullptr;
};

/// A delete's answer: the object (decoded with decode) or a Status.
struct delete_slot {
  codec::decode_fn decode = nullptr;
  codec::proto_read_fn proto_read = nullptr;  ///< a protobuf body; nullptr: ask for JSON only
  codec::type_meta_fn type_meta = nullptr;
  void* result = nullptr;  ///< a delete_result<O>
  void* (*emplace_object)(void*) = nullptr;
  api_status* (*emplace_status)(void*) = nullptr;
  std::string object_kind;  ///< the kind O is ("ConfigMap", "ConfigMapList")
  std::shared_ptr<void> keep;
};

template <class O>
delete_slot make_delete_slot(std::shared_ptr<delete_result<O>> r, std::string_view kind) {
  delete_slot s;
  s.decode = &codec::decode_erased<O>;
  s.proto_read = proto_reader_of<O>();
  s.type_meta = &codec::type_meta_erased<O>;
  s.result = r.get();
  s.emplace_object = [](void* p) -> void* { return &static_cast<delete_result<O>*>(p)->object.emplace(); };
  s.emplace_status = [](void* p) -> api_status* { return &static_cast<delete_result<O>*>(p)->status.emplace(); };
  s.object_kind = kind;
  s.keep = std::move(r);
  return s;
}

struct shared_list_sink;

/// A list: pages decode into fresh page objects whose items are appended
/// to the result.
struct list_slot {
  codec::decode_fn decode = nullptr;
  codec::read_fn read = nullptr;              ///< straight from the text; decode reports bad input
  codec::proto_read_fn proto_read = nullptr;  ///< a protobuf page; nullptr: ask for JSON only
  codec::type_meta_fn type_meta = nullptr;    ///< apiVersion and kind of a page
  void* out = nullptr;
  std::shared_ptr<void> (*make_page)() = nullptr;
  void (*append)(void* dst, void* page) = nullptr;
  void (*clear)(void* dst) = nullptr;
  /// The page's continue token; with `whole` (all pages into one list) the
  /// page's continue and remainingItemCount are cleared.
  std::string (*take_continue)(void* page, bool whole) = nullptr;
  /// Shared lists: the sink of a page, which list_decoder fills item by
  /// item as the body arrives; nullptr: the body is read whole.
  shared_list_sink (*shared_sink)(void* page) = nullptr;
  std::shared_ptr<void> keep;
};

/// list_slot::append for a list type L: moves the page's items to the end.
template <class L>
void append_page(void* dst, void* page) {
  auto& d = static_cast<L*>(dst)->items;
  auto& p = static_cast<L*>(page)->items;
  d.insert(d.end(), std::make_move_iterator(p.begin()), std::make_move_iterator(p.end()));
}

/// What the compiled list reader needs of a shared_list<T>: its fields, and
/// how to add and decode one item.
struct shared_list_sink {
  std::string& resource_version;
  std::string& continue_token;
  std::optional<std::int64_t>& remaining_item_count;
  void* items;
  void* (*add_item)(void* items);  ///< appends a new T, returns it
  void (*clear_items)(void* items);
  codec::read_fn read_item;
  codec::decode_fn decode_item;
  codec::proto_read_fn proto_item;  ///< nullptr: the item type has no protobuf codec
  void (*drop_last)(void* items);   ///< removes the last item added
};
/// Decode a List envelope (apiVersion and kind ignored, metadata's
/// resourceVersion / continue / remainingItemCount kept, items one by one);
/// throw decode_error as the generated List decoders do.
void read_shared_list(codec::json_reader& in, const shared_list_sink& s, const json_path& at);
void decode_shared_list(const boost::json::value& in, const shared_list_sink& s, const json_path& at);
/// The same from a protobuf List message (ListMeta in field 1, items in 2).
void read_shared_list_proto(codec::proto_reader& in, const shared_list_sink& s, const json_path& at);
/// The pieces of those, for list_decoder: empty the list; read a ListMeta
/// (JSON: null or an object; protobuf: the message's fields) into it; read
/// one protobuf item (a bare message) and append it.
void reset_shared_list(const shared_list_sink& s);
void read_list_meta(codec::json_reader& in, const shared_list_sink& s, const json_path& here);
void read_list_meta_proto(codec::proto_reader& md, const shared_list_sink& s, const json_path& here);
void read_shared_item_proto(codec::proto_reader& item, const shared_list_sink& s, const json_path& at);

template <class T>
shared_list_sink make_shared_list_sink(shared_list<T>& l) {
  using items_t = std::vector<std::shared_ptr<T>>;
  return {l.resource_version,
          l.continue_token,
          l.remaining_item_count,
          &l.items,
          [](void* items) -> void* { return static_cast<items_t*>(items)->emplace_back(std::make_shared<T>()).get(); },
          [](void* items) { static_cast<items_t*>(items)->clear(); },
          &codec::read_erased<T>,
          &codec::decode_erased<T>,
          proto_reader_of<T>(),
          [](void* items) { static_cast<items_t*>(items)->pop_back(); }};
}

template <class T>
list_slot make_shared_list_slot(std::shared_ptr<shared_list<T>> out) {
  using L = shared_list<T>;
  list_slot s;
  s.read = [](codec::json_reader& in, void* o, const json_path& at) {
    read_shared_list(in, make_shared_list_sink(*static_cast<L*>(o)), at);
  };
  s.decode = [](const boost::json::value& in, void* o, const json_path& at) {
    decode_shared_list(in, make_shared_list_sink(*static_cast<L*>(o)), at);
  };
  if constexpr (has_protobuf<T>) {
    s.proto_read = [](codec::proto_reader& in, void* o, const json_path& at) {
      read_shared_list_proto(in, make_shared_list_sink(*static_cast<L*>(o)), at);
    };
  }
  s.shared_sink = [](void* o) { return make_shared_list_sink(*static_cast<L*>(o)); };
  s.out = out.get();
  s.make_page = []() -> std::shared_ptr<void> { return std::make_shared<L>(); };
  s.append = &append_page<L>;
  s.clear = [](void* dst) { *static_cast<L*>(dst) = L{}; };
  s.take_continue = [](void* page, bool whole) -> std::string {
    auto& l = *static_cast<L*>(page);
    if (!whole) return l.continue_token;
    l.remaining_item_count.reset();
    return std::exchange(l.continue_token, std::string());
  };
  s.keep = std::move(out);
  return s;
}

template <class L>
list_slot make_list_slot(std::shared_ptr<L> out) {
  list_slot s;
  s.decode = &codec::decode_erased<L>;
  s.read = &codec::read_erased<L>;
  s.proto_read = proto_reader_of<L>();
  s.type_meta = &codec::type_meta_erased<L>;
  s.out = out.get();
  s.make_page = []() -> std::shared_ptr<void> { return std::make_shared<L>(); };
  s.append = &append_page<L>;
  s.clear = [](void* dst) { *static_cast<L*>(dst) = L{}; };
  s.take_continue = [](void* page, bool whole) -> std::string {
    auto& md = static_cast<L*>(page)->metadata;  // ListMeta, inline or optional
    auto* m = [&] {
      if constexpr (requires { md.has_value(); }) {
        return md ? &*md : nullptr;
      } else {
        return &md;
      }
    }();
    if (!m) return {};
    std::string next = m->continue_.value_or(std::string());
    if (whole) {
      m->continue_.reset();
      m->remaining_item_count.reset();
    }
    return next;
  };
  s.keep = std::move(out);
  return s;
}

/// A write body, encoded at call time (so the caller's object may go away
/// before the operation starts, as with asio::deferred).
struct typed_body {
  std::string body;  ///< JSON text, or a protobuf body (content_type says)
  std::string content_type = "application/json";
  std::string name;            ///< metadata.name of the encoded object
  std::string namespace_name;  ///< metadata.namespace of the encoded object
};

/// Encodes `obj` and fills apiVersion and kind when the object lacks them
/// (empty api_version/kind: leave as is).
typed_body encode_body(codec::encode_fn enc, const void* obj, std::string_view api_version, std::string_view kind);

template <class U>
typed_body encode_typed(const U& obj, std::string_view api_version = {}, std::string_view kind = {}) {
  return encode_body(&codec::encode_erased<U>, &obj, api_version, kind);
}

/// Encodes `obj` as protobuf (envelope apiVersion and kind: the object's
/// own, else the given ones); false, and `out` untouched, when the object
/// holds what protobuf cannot carry (unknown JSON members).
bool encode_body_protobuf(codec::proto_write_fn enc, const void* obj, std::string_view api_version,
                          std::string_view kind, typed_body& out);

/// The body of a create or replace of a resource kind: protobuf when the
/// target asks for it and the object can be carried by it, else JSON.
template <class U>
typed_body encode_write(const typed_target& t, const U& obj, std::string_view api_version, std::string_view kind) {
  if constexpr (has_protobuf<U> && requires {
                  obj.name();
                  obj.namespace_();
                }) {
    if (t.protobuf) {
      typed_body b;
      if (encode_body_protobuf(&codec::write_proto_erased<U>, &obj, api_version, kind, b)) {
        b.name = obj.name();
        b.namespace_name = obj.namespace_();
        return b;
      }
    }
  }
  return encode_typed(obj, api_version, kind);
}

/// The verbs, in compiled code. `subresource` may be empty.
void typed_get(typed_ptr t, std::string name, std::string subresource, decode_slot out, typed_completion h);
void typed_list(typed_ptr t, list_params p, bool all_pages, list_slot out, typed_completion h);
void typed_create(typed_ptr t, typed_body body, std::string name, std::string subresource, write_params p,
                  decode_slot out, typed_completion h);
void typed_replace(typed_ptr t, typed_body body, std::string name, std::string subresource, write_params p,
                   decode_slot out, typed_completion h);
void typed_patch(typed_ptr t, std::string name, patch_type type, std::string body, std::string subresource,
                 patch_params p, decode_slot out, typed_completion h);
void typed_delete(typed_ptr t, std::string name, delete_params p, delete_slot out, typed_completion h);
void typed_delete_collection(typed_ptr t, list_params lp, delete_params dp, delete_slot out, typed_completion h);

/// Completes the public handler with the value the compiled operation
/// filled in (or a default R on failure: no partial results).
template <class R>
struct typed_deliver : handler_wrapper<completion<R>> {
  std::shared_ptr<R> out;
  void operator()(error_code ec, diagnostics diag, typed_done) {
    if (ec) {
      std::move(this->handler)(ec, std::move(diag), R{});
    } else {
      std::move(this->handler)(ec, std::move(diag), std::move(*out));
    }
  }
};

/// initiate<R> for compiled typed operations: start(std::shared_ptr<R>, typed_completion).
template <class R, class Start, class Token>
auto typed_initiate(Start start, Token&& token) {
  return initiate<R>(
      [start = std::move(start)](completion<R> h) mutable {
        auto out = std::make_shared<R>();
        auto keep = out;
        start(std::move(keep), typed_completion(typed_deliver<R>{{std::move(h)}, std::move(out)}));
      },
      std::forward<Token>(token));
}

template <class R>
decode_slot make_decode_slot(std::shared_ptr<R> out) {
  decode_slot s;
  s.decode = &codec::decode_erased<R>;
  s.read = &codec::read_erased<R>;
  s.proto_read = proto_reader_of<R>();
  s.type_meta = &codec::type_meta_erased<R>;
  s.out = out.get();
  s.keep = std::move(out);
  if constexpr (requires(const R& o) {
                  { o.namespace_() } -> stable_text;
                  { o.name() } -> stable_text;
                  { o.resource_version() } -> stable_text;
                }) {
    s.identity = [](const void* p) {
      const auto& o = *static_cast<const R*>(p);
      object_identity id{o.namespace_(), o.name(), o.resource_version()};
      if constexpr (has_label_map<R>) id.labels = &o.labels();
      return id;
    };
  }
  return s;
}

}  // namespace detail
}  // namespace kube
