#include "transport/tls_context.hpp"

#include <kube/error.hpp>
#include <kube/exception.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace kube::detail {
namespace asio = boost::asio;

std::string openssl_error_text() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

std::shared_ptr<asio::ssl::context> make_tls_context(const transport_params& s) {
  auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
  ctx->set_options(asio::ssl::context::default_workarounds);
  // TLS 1.2 at least, as Go's crypto/tls for client-go: said here, not left
  // to the system's OpenSSL configuration.
  if (SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION) != 1)
    throw kube::error(client_errc::tls_error, "cannot require TLS 1.2 (" + openssl_error_text() + ")");
  boost::system::error_code ec;
  const auto source = [](const std::string& file, const char* field) {
    return file.empty() ? std::string(field) : std::string(field) + " " + file;
  };
  if (s.insecure_skip_tls_verify && !s.ca_pem.empty()) {
    // For configurations built in code; a kubeconfig is refused earlier, naming its file.
    throw kube::error(client_errc::invalid_config,
                      "insecure_skip_tls_verify is set together with a certificate authority (" +
                          source(s.ca_file, "certificate-authority") + "); a CA cannot be used with verification off");
  }
  if (s.insecure_skip_tls_verify) {
    ctx->set_verify_mode(asio::ssl::verify_none);
  } else {
    ctx->set_verify_mode(asio::ssl::verify_peer);
    if (!s.ca_pem.empty()) {
      ERR_clear_error();
      ctx->add_certificate_authority(asio::buffer(s.ca_pem), ec);
      if (ec)
        throw kube::error(client_errc::tls_error, source(s.ca_file, "certificate-authority") +
                                                      ": not a PEM certificate bundle (" + openssl_error_text() + ")");
    } else {
      ctx->set_default_verify_paths(ec);
    }
  }
  if (!s.client_cert_pem.empty() || !s.client_key_pem.empty()) {
    if (s.client_cert_pem.empty() || s.client_key_pem.empty())
      throw kube::error(client_errc::invalid_config, "client-certificate and client-key must be given together");
    ERR_clear_error();
    ctx->use_certificate_chain(asio::buffer(s.client_cert_pem), ec);
    if (ec)
      throw kube::error(client_errc::tls_error, source(s.client_cert_file, "client-certificate") +
                                                    ": not a PEM certificate (" + openssl_error_text() + ")");
    ERR_clear_error();
    ctx->use_private_key(asio::buffer(s.client_key_pem), asio::ssl::context::pem, ec);
    if (ec)
      throw kube::error(client_errc::tls_error, source(s.client_key_file, "client-key") +
                                                    ": not a PEM private key matching the certificate (" +
                                                    openssl_error_text() + ")");
  }
  return ctx;
}

}  // namespace kube::detail
