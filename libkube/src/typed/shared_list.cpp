// The typed client's shared-pointer lists (kube::shared_list, what
// api<T>::async_list_shared and the informers' lists complete with): a List
// envelope read from JSON, its DOM or protobuf, each item decoded straight
// into its own std::shared_ptr through the sink's function pointers.

#include <kube/codec/codec_impl.hpp>
#include <kube/codec/json_reader.hpp>
#include <kube/codec/proto_impl.hpp>
#include <kube/detail/typed_core.hpp>

#include <optional>
#include <string>

namespace kube {

namespace json = boost::json;

namespace detail {

void reset_shared_list(const shared_list_sink& s) {
  s.resource_version.clear();
  s.continue_token.clear();
  s.remaining_item_count.reset();
  s.clear_items(s.items);
}

namespace {

void take_list_meta(const shared_list_sink& s, std::optional<std::string>& rv, std::optional<std::string>& cont,
                    std::optional<std::int64_t>& remaining) {
  s.resource_version = std::move(rv).value_or(std::string());
  s.continue_token = std::move(cont).value_or(std::string());
  s.remaining_item_count = remaining;
}

}  // namespace

void read_list_meta(codec::json_reader& in, const shared_list_sink& s, const json_path& here) {
  if (in.try_null()) return;
  codec::expect_object(in, here);
  std::optional<std::string> rv, cont;
  std::optional<std::int64_t> remaining;
  std::string_view mk;
  while (in.next_key(mk)) {
    const json_path m{&here, mk};
    if (mk == "resourceVersion") {
      codec::read_into(in, rv, m);
    } else if (mk == "continue") {
      codec::read_into(in, cont, m);
    } else if (mk == "remainingItemCount") {
      codec::read_into(in, remaining, m);
    } else {
      (void)in.value();  // selfLink and members newer than this client
    }
  }
  take_list_meta(s, rv, cont, remaining);
}

void read_list_meta_proto(codec::proto_reader& md, const shared_list_sink& s, const json_path& here) {
  std::optional<std::string> rv, cont;
  std::optional<std::int64_t> remaining;
  while (md.next()) {
    switch (md.tag()) {
    case 2:
      codec::pb::read(md, rv, {&here, "resourceVersion"});
      break;
    case 3:
      codec::pb::read(md, cont, {&here, "continue"});
      break;
    case 4:
      codec::pb::read(md, remaining, {&here, "remainingItemCount"});
      break;
    default:
      md.skip();
      break;
    }
  }
  take_list_meta(s, rv, cont, remaining);
}

void read_shared_item_proto(codec::proto_reader& item, const shared_list_sink& s, const json_path& at) {
  try {
    s.proto_item(item, s.add_item(s.items), at);
  } catch (const protozero::exception& e) {
    codec::pb::fail_malformed(at, e);
  }
}

void read_shared_list(codec::json_reader& in, const shared_list_sink& s, const json_path& at) {
  reset_shared_list(s);
  codec::expect_object(in, at);
  std::string_view k;
  while (in.next_key(k)) {
    const json_path here{&at, k};
    if (k == "items") {
      if (in.try_null()) continue;
      if (!in.begin_array()) codec::fail_type(in.value(), here, "an array");
      for (std::size_t i = 0; in.next_element(); ++i) {
        const json_path item{&here, {}, i};
        s.read_item(in, s.add_item(s.items), item);
      }
    } else if (k == "metadata") {
      read_list_meta(in, s, here);
    } else {
      (void)in.value();  // apiVersion, kind
    }
  }
}

void decode_shared_list(const boost::json::value& in, const shared_list_sink& s, const json_path& at) {
  reset_shared_list(s);
  const auto& o = codec::expect_object(in, at);
  if (const auto* md = o.if_contains("metadata"); md && !md->is_null()) {
    const json_path here{&at, "metadata"};
    const auto& mo = codec::expect_object(*md, here);
    std::optional<std::string> rv, cont;
    std::optional<std::int64_t> remaining;
    if (const auto* v = mo.if_contains("resourceVersion")) codec::decode_into(*v, rv, {&here, "resourceVersion"});
    if (const auto* v = mo.if_contains("continue")) codec::decode_into(*v, cont, {&here, "continue"});
    if (const auto* v = mo.if_contains("remainingItemCount")) {
      codec::decode_into(*v, remaining, {&here, "remainingItemCount"});
    }
    take_list_meta(s, rv, cont, remaining);
  }
  if (const auto* items = o.if_contains("items"); items && !items->is_null()) {
    const json_path here{&at, "items"};
    const auto* a = items->if_array();
    if (!a) codec::fail_type(*items, here, "an array");
    for (std::size_t i = 0; i < a->size(); ++i) {
      const json_path item{&here, {}, i};
      s.decode_item((*a)[i], s.add_item(s.items), item);
    }
  }
}

void read_shared_list_proto(codec::proto_reader& in, const shared_list_sink& s, const json_path& at) {
  reset_shared_list(s);
  if (!s.proto_item) codec::fail(at, "the item type has no protobuf codec");
  const json_path items{&at, "items"};
  std::size_t i = 0;
  while (in.next()) {
    if (in.tag() == 1) {  // ListMeta
      const json_path here{&at, "metadata"};
      auto md = in.message(here);
      read_list_meta_proto(md, s, here);
    } else if (in.tag() == 2) {
      const json_path item{&items, {}, i++};
      auto sub = in.message(item);
      read_shared_item_proto(sub, s, item);
    } else {
      in.skip();
    }
  }
}

}  // namespace detail
}  // namespace kube
