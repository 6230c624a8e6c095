#include <kube/rest/list_params.hpp>
#include <kube/dynamic/unstructured.hpp>

#include <boost/json/serialize.hpp>

namespace kube {
namespace {

std::string str_at(const boost::json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

const boost::json::object* meta_of(const boost::json::object& o) {
  const auto* m = o.if_contains("metadata");
  return m && m->is_object() ? &m->as_object() : nullptr;
}

std::map<std::string, std::string> string_map(const boost::json::object& o, std::string_view key) {
  std::map<std::string, std::string> out;
  const auto* m = meta_of(o);
  if (!m) return out;
  const auto* v = m->if_contains(key);
  if (!v || !v->is_object()) return out;
  for (const auto& [k, val] : v->as_object())
    if (val.is_string()) out.emplace(std::string(k), std::string(val.as_string()));
  return out;
}

std::string meta_str(const boost::json::object& o, std::string_view key) {
  const auto* m = meta_of(o);
  return m ? str_at(*m, key) : std::string();
}

boost::json::object& sub_object(boost::json::object& o, std::string_view key) {
  auto& v = o[key];
  if (!v.is_object()) v = boost::json::object{};
  return v.as_object();
}

}  // namespace

std::string unstructured::api_version() const { return str_at(obj_, "apiVersion"); }
std::string unstructured::kind() const { return str_at(obj_, "kind"); }
std::string unstructured::name() const { return meta_str(obj_, "name"); }
std::string unstructured::namespace_() const { return meta_str(obj_, "namespace"); }
std::string unstructured::uid() const { return meta_str(obj_, "uid"); }
std::string unstructured::resource_version() const { return meta_str(obj_, "resourceVersion"); }
std::string unstructured::generate_name() const { return meta_str(obj_, "generateName"); }
std::optional<std::string> unstructured::deletion_timestamp() const {
  auto s = meta_str(obj_, "deletionTimestamp");
  if (s.empty()) return std::nullopt;
  return s;
}
std::map<std::string, std::string> unstructured::labels() const { return string_map(obj_, "labels"); }
std::map<std::string, std::string> unstructured::annotations() const { return string_map(obj_, "annotations"); }

boost::json::object& unstructured::metadata() { return sub_object(obj_, "metadata"); }

unstructured& unstructured::set_api_version(std::string_view v) {
  obj_["apiVersion"] = v;
  return *this;
}
unstructured& unstructured::set_kind(std::string_view v) {
  obj_["kind"] = v;
  return *this;
}
unstructured& unstructured::set_name(std::string_view v) {
  metadata()["name"] = v;
  return *this;
}
unstructured& unstructured::set_namespace(std::string_view v) {
  metadata()["namespace"] = v;
  return *this;
}
unstructured& unstructured::set_resource_version(std::string_view v) {
  metadata()["resourceVersion"] = v;
  return *this;
}
unstructured& unstructured::set_label(std::string_view key, std::string_view value) {
  sub_object(metadata(), "labels")[key] = value;
  return *this;
}
unstructured& unstructured::set_annotation(std::string_view key, std::string_view value) {
  sub_object(metadata(), "annotations")[key] = value;
  return *this;
}

std::string unstructured::to_json() const { return boost::json::serialize(obj_); }

const char* content_type_of(patch_type t) noexcept {
  switch (t) {
  case patch_type::json:
    return "application/json-patch+json";
  case patch_type::merge:
    return "application/merge-patch+json";
  case patch_type::strategic_merge:
    return "application/strategic-merge-patch+json";
  case patch_type::apply:
    return "application/apply-patch+yaml";
  }
  return "application/merge-patch+json";
}

}  // namespace kube
