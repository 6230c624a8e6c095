#include <kube/transport/request.hpp>

#include <boost/url/encode.hpp>
#include <boost/url/rfc/pchars.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

namespace kube {
namespace {

void append_segment(std::string& out, const std::string& s) {
  out += '/';
  out += boost::urls::encode(s, boost::urls::unreserved_chars);
}

}  // namespace

const char* to_string(http_method m) noexcept {
  switch (m) {
  case http_method::get:
    return "GET";
  case http_method::post:
    return "POST";
  case http_method::put:
    return "PUT";
  case http_method::patch:
    return "PATCH";
  case http_method::delete_:
    return "DELETE";
  case http_method::head:
    return "HEAD";
  }
  return "GET";
}

std::string request::target() const {
  std::string t;
  if (!raw_path_.empty()) {
    t = raw_path_;
  } else {
    t = group_.empty() ? "/api" : "/apis";
    if (!group_.empty()) append_segment(t, group_);
    append_segment(t, version_);
    if (!namespace_name_.empty()) {
      t += "/namespaces";
      append_segment(t, namespace_name_);
    }
    if (!resource_.empty()) append_segment(t, resource_);
    if (!name_.empty()) append_segment(t, name_);
    if (!subresource_.empty()) append_segment(t, subresource_);
  }
  char sep = t.find('?') == std::string::npos ? '?' : '&';
  for (const auto& [k, v] : params_) {
    t += sep;
    sep = '&';
    t += boost::urls::encode(k, boost::urls::unreserved_chars);
    t += '=';
    t += boost::urls::encode(v, boost::urls::unreserved_chars);
  }
  return t;
}

std::string request::describe() const {
  std::string d = to_string(method_);
  d += ' ';
  if (!raw_path_.empty()) return d + raw_path_;
  d += group_.empty() ? version_ : group_ + "/" + version_;
  d += ' ';
  d += resource_;
  if (!namespace_name_.empty() || !name_.empty()) {
    d += ' ';
    if (!namespace_name_.empty()) d += namespace_name_ + (name_.empty() ? "" : "/");
    d += name_;
  }
  if (!subresource_.empty()) d += "/" + subresource_;
  return d;
}

}  // namespace kube
