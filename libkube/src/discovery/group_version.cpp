#include <kube/discovery/group_version.hpp>
#include <kube/discovery/group_version_kind.hpp>
#include <kube/discovery/group_version_resource.hpp>

#include <algorithm>

namespace kube {
namespace {
bool plain_token(std::string_view s) {
  return !s.empty() && std::none_of(s.begin(), s.end(),
                                    [](char c) { return c == '/' || c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}
}  // namespace

std::optional<group_version> group_version::parse(std::string_view api_version) {
  const auto slash = api_version.find('/');
  if (slash == std::string_view::npos) {
    if (!plain_token(api_version)) return std::nullopt;
    return group_version{"", std::string(api_version)};
  }
  const auto group = api_version.substr(0, slash);
  const auto version = api_version.substr(slash + 1);
  // "/v1" is accepted by client-go as the core group; an empty version never is.
  if (!group.empty() && !plain_token(group)) return std::nullopt;
  if (!plain_token(version)) return std::nullopt;
  return group_version{std::string(group), std::string(version)};
}

std::string group_version::str() const {
  if (group.empty()) return version;
  return group + "/" + version;
}

std::optional<group_version_kind> group_version_kind::from_api_version(std::string_view api_version,
                                                                       std::string_view kind) {
  auto gv = group_version::parse(api_version);
  if (!gv) return std::nullopt;
  return group_version_kind{std::move(gv->group), std::move(gv->version), std::string(kind)};
}

std::string group_version_kind::str() const { return group + "/" + version + ", Kind=" + kind; }

std::string group_version_resource::str() const { return group + "/" + version + ", Resource=" + resource; }

}  // namespace kube
