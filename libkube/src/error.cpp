#include <kube/diagnostics.hpp>
#include <kube/error.hpp>
#include <kube/exception.hpp>

#include <boost/asio/multiple_exceptions.hpp>
#include <boost/json/object.hpp>

#include <array>
#include <string>
#include <utility>

namespace kube {
namespace {

class client_category_impl final : public boost::system::error_category {
public:
  const char* name() const noexcept override { return "kube.client"; }
  std::string message(int ev) const override {
    switch (static_cast<client_errc>(ev)) {
    case client_errc::invalid_config:
      return "invalid client configuration";
    case client_errc::file_error:
      return "cannot read a referenced file";
    case client_errc::tls_error:
      return "TLS error";
    case client_errc::connection_failed:
      return "connection failed";
    case client_errc::protocol_error:
      return "malformed HTTP response";
    case client_errc::decode_error:
      return "response does not decode into the expected type";
    case client_errc::auth_failed:
      return "credentials could not be obtained";
    case client_errc::exec_plugin_failed:
      return "exec credential plugin failed";
    case client_errc::timeout:
      return "operation timed out";
    case client_errc::watch_stream_error:
      return "malformed watch event";
    case client_errc::too_many_retries:
      return "too many retries";
    case client_errc::already_running:
      return "already running";
    case client_errc::encode_error:
      return "request body cannot be encoded";
    case client_errc::response_too_large:
      return "response body too large";
    case client_errc::not_running:
      return "not running (stopped)";
    }
    return "unknown kube.client error " + std::to_string(ev);
  }
};

struct reason_entry {
  std::string_view reason;
  api_errc code;
};

// metav1.StatusReason values, as the server spells them.
constexpr std::array<reason_entry, 18> reasons{{
    {"BadRequest", api_errc::bad_request},
    {"Unauthorized", api_errc::unauthorized},
    {"Forbidden", api_errc::forbidden},
    {"NotFound", api_errc::not_found},
    {"MethodNotAllowed", api_errc::method_not_allowed},
    {"NotAcceptable", api_errc::not_acceptable},
    {"AlreadyExists", api_errc::already_exists},
    {"Conflict", api_errc::conflict},
    {"Gone", api_errc::gone},
    {"Expired", api_errc::expired},
    {"RequestEntityTooLarge", api_errc::request_entity_too_large},
    {"UnsupportedMediaType", api_errc::unsupported_media_type},
    {"Invalid", api_errc::invalid},
    {"TooManyRequests", api_errc::too_many_requests},
    {"InternalError", api_errc::internal_error},
    {"ServiceUnavailable", api_errc::service_unavailable},
    {"ServerTimeout", api_errc::server_timeout},
    {"Timeout", api_errc::timeout},
}};

class api_category_impl final : public boost::system::error_category {
public:
  const char* name() const noexcept override { return "kube.api"; }
  std::string message(int ev) const override {
    for (const auto& r : reasons)
      if (static_cast<int>(r.code) == ev) return std::string(r.reason);
    if (ev == static_cast<int>(api_errc::unknown)) return "unknown API error";
    return "unknown kube.api error " + std::to_string(ev);
  }
};

}  // namespace

const boost::system::error_category& client_category() noexcept {
  static const client_category_impl c;
  return c;
}

const boost::system::error_category& api_category() noexcept {
  static const api_category_impl c;
  return c;
}

api_errc api_errc_from_status(std::string_view reason, int http_code) noexcept {
  for (const auto& r : reasons)
    if (r.reason == reason) return r.code;
  switch (http_code) {
  case 400:
    return api_errc::bad_request;
  case 401:
    return api_errc::unauthorized;
  case 403:
    return api_errc::forbidden;
  case 404:
    return api_errc::not_found;
  case 405:
    return api_errc::method_not_allowed;
  case 406:
    return api_errc::not_acceptable;
  case 409:
    return api_errc::conflict;
  case 410:
    return api_errc::gone;
  case 413:
    return api_errc::request_entity_too_large;
  case 415:
    return api_errc::unsupported_media_type;
  case 422:
    return api_errc::invalid;
  case 429:
    return api_errc::too_many_requests;
  case 500:
    return api_errc::internal_error;
  case 503:
    return api_errc::service_unavailable;
  case 504:
    return api_errc::server_timeout;
  default:
    return api_errc::unknown;
  }
}

bool is_resource_expired(const error_code& ec) noexcept { return ec == api_errc::gone || ec == api_errc::expired; }

error_code error_of(const std::exception_ptr& e) {
  if (!e) return {};
  try {
    std::rethrow_exception(e);
  } catch (const boost::system::system_error& se) {
    return se.code();
  } catch (const boost::asio::multiple_exceptions& me) {
    return error_of(me.first_exception());
  } catch (...) {
    return make_error_code(boost::system::errc::state_not_recoverable);
  }
}

std::string exception_message(const std::exception_ptr& e) {
  if (!e) return {};
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown exception";
  }
}

void diagnostics::set_server_status(boost::json::object s) {
  server_status_ = std::make_shared<const boost::json::object>(std::move(s));
}

std::string diagnostics::server_message() const {
  if (!server_status_) return {};
  const auto* m = server_status_->if_contains("message");
  return m && m->is_string() ? std::string(m->as_string()) : std::string();
}

std::string error_message(const error_code& ec, const diagnostics& diag) {
  std::string w = diag.client_message();
  const auto s = diag.server_message();
  if (!s.empty() && w.find(s) == std::string::npos) w += (w.empty() ? "" : ": ") + s;
  return w.empty() ? ec.message() : w;
}

error::error(error_code ec, diagnostics diag)
    : system_error(ec),
      diag_(std::move(diag)),
      what_(error_message(ec, diag_)) {}

error::error(error_code ec, std::string client_message)
    : error(ec, [&] {
        diagnostics d;
        d.set_client_message(std::move(client_message));
        return d;
      }()) {}

}  // namespace kube
