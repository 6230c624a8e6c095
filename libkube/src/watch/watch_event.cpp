#include <kube/error.hpp>
#include <kube/watch/watch_event.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace kube {
namespace {

struct type_name {
  std::string_view name;
  watch_event_type type;
};

constexpr std::array<type_name, 5> type_names{{
    {"ADDED", watch_event_type::added},
    {"MODIFIED", watch_event_type::modified},
    {"DELETED", watch_event_type::deleted},
    {"BOOKMARK", watch_event_type::bookmark},
    {"ERROR", watch_event_type::error},
}};

// Status.code is an int32 on the wire; anything else means "no code".
int status_code(const boost::json::object& status) {
  const auto* c = status.if_contains("code");
  if (!c) return 0;
  if (c->is_int64() && c->get_int64() >= 0 && c->get_int64() <= 999) return static_cast<int>(c->get_int64());
  if (c->is_uint64() && c->get_uint64() <= 999) return static_cast<int>(c->get_uint64());
  return 0;
}

}  // namespace

std::string_view to_string(watch_event_type t) noexcept {
  for (const auto& n : type_names)
    if (n.type == t) return n.name;
  return "UNKNOWN";
}

std::optional<watch_event_type> watch_event_type_from_string(std::string_view s) noexcept {
  for (const auto& n : type_names)
    if (n.name == s) return n.type;
  return std::nullopt;
}

error_code watch_event_error(const watch_event& ev, diagnostics& diag) {
  if (ev.type != watch_event_type::error) return {};
  std::string_view reason;
  if (const auto* r = ev.object.if_contains("reason"); r && r->is_string()) reason = r->get_string();
  const int code = status_code(ev.object);
  const auto ec = api_errc_from_status(reason, code);
  std::string status = "Status";
  if (code != 0) status += " " + std::to_string(code);
  if (!reason.empty()) (status += " ") += reason;
  diag.set_client_message(
      is_resource_expired(ec)
          ? "the resourceVersion this watch started from is older than the server keeps (" + status +
                ": its history was compacted) - list again and watch from the list's resourceVersion, as an "
                "informer does"
          : "the watch stream reported an ERROR event (" + status + ")");
  // A copy on the default resource: the diagnostics must not pin the event's arena.
  diag.set_server_status(boost::json::object(ev.object, boost::json::storage_ptr()));
  return ec;
}

}  // namespace kube
