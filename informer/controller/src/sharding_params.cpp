// Sharded controllers: the check of sharding_params and the names derived
// from them (kube/controller/sharding/params.hpp).
#include <kube/controller/sharding/params.hpp>

#include <kube/exception.hpp>

#include <algorithm>
#include <cctype>
#include <string>

namespace kube::controller {

namespace {

std::string ms(std::chrono::milliseconds d) { return std::to_string(d.count()) + "ms"; }

// A label value that can also be part of a Lease name (a DNS subdomain):
// 1-63 characters, dot-separated parts of [a-z0-9-] that start and end
// alphanumeric.
bool name_ok(std::string_view v) {
  if (v.empty() || v.size() > 63) return false;
  auto alnum = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0 || (c >= 'a' && c <= 'z'); };
  std::size_t start = 0;
  for (;;) {
    const auto dot = v.find('.', start);
    const auto part = v.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || !alnum(part.front()) || !alnum(part.back())) return false;
    if (!std::all_of(part.begin(), part.end(), [&](char c) { return alnum(c) || c == '-'; })) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

void validate(const sharding_params& p) {
  std::string problems;
  auto bad = [&](const std::string& s) {
    if (!problems.empty()) problems += "; ";
    problems += s;
  };
  if (!name_ok(p.ring))
    bad("ring \"" + p.ring +
        "\" must be 1-63 characters of [a-z0-9.-], each dot-separated part starting and ending "
        "alphanumeric");
  if (p.lease_namespace.empty()) bad("lease_namespace is empty");
  if (!name_ok(p.identity))
    bad("identity \"" + p.identity +
        "\" must be 1-63 characters of [a-z0-9.-], each dot-separated part starting and "
        "ending alphanumeric (a pod name is)");
  if (p.retry_period <= std::chrono::milliseconds::zero())
    bad("retry_period (" + ms(p.retry_period) + ") must be positive");
  if (p.lease_duration < std::chrono::seconds(1) ||
      p.lease_duration % std::chrono::seconds(1) != std::chrono::milliseconds::zero())
    bad("lease_duration (" + ms(p.lease_duration) + ") must be whole seconds, at least 1s");
  if (p.renew_deadline <= p.retry_period)
    bad("renew_deadline (" + ms(p.renew_deadline) + ") must be greater than retry_period (" + ms(p.retry_period) + ")");
  if (p.lease_duration <= p.renew_deadline)
    bad("lease_duration (" + ms(p.lease_duration) + ") must be greater than renew_deadline (" + ms(p.renew_deadline) +
        ")");
  if (p.tokens_per_member == 0) bad("tokens_per_member must be at least 1");
  if (!problems.empty()) throw kube::error(client_errc::invalid_config, "sharding config: " + problems);
}

std::string shard_label_key(const sharding_params& p) { return std::string(shard_object_label_prefix) + p.ring; }

std::string shard_label_selector(const sharding_params& p) { return shard_label_key(p) + "=" + p.identity; }

std::string shard_lease_name(const sharding_params& p) { return p.ring + "-shard-" + p.identity; }

}  // namespace kube::controller
