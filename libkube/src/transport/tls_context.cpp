#include "transport/tls_context.hpp"

#include <kube/detail/config_files.hpp>
#include <kube/error.hpp>
#include <kube/exception.hpp>

#include <sys/stat.h>

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

tls_source::tls_source(transport_params s)
    : params_(std::move(s)),
      context_(make_tls_context(params_)),
      files_(look()),
      looked_(std::chrono::steady_clock::now()) {}

std::vector<tls_source::file_id> tls_source::look() const {
  std::vector<file_id> out;
  for (const std::string* path : {&params_.ca_file, &params_.client_cert_file, &params_.client_key_file}) {
    file_id id;
    struct stat st {};
    if (!path->empty() && ::stat(path->c_str(), &st) == 0) {
      id.present = true;
      id.dev = st.st_dev;
      id.ino = st.st_ino;
      id.size = st.st_size;
      id.mtime_sec = st.st_mtim.tv_sec;
      id.mtime_nsec = st.st_mtim.tv_nsec;
    }
    out.push_back(id);
  }
  return out;
}

tls_source::snapshot tls_source::current() {
  const std::lock_guard lock(m_);
  const bool any_file =
      !params_.ca_file.empty() || !params_.client_cert_file.empty() || !params_.client_key_file.empty();
  const auto now = std::chrono::steady_clock::now();
  if (any_file && now - looked_ >= std::chrono::seconds(1)) {
    looked_ = now;
    if (auto files = look(); files != files_) {
      try {
        // Each file that is named is read again; inline data stays as given.
        transport_params p = params_;
        if (!p.ca_file.empty()) p.ca_pem = read_config_file(p.ca_file, "certificate-authority");
        if (!p.client_cert_file.empty()) p.client_cert_pem = read_config_file(p.client_cert_file, "client-certificate");
        if (!p.client_key_file.empty()) p.client_key_pem = read_config_file(p.client_key_file, "client-key");
        context_ = make_tls_context(p);
        files_ = std::move(files);
        generation_.fetch_add(1, std::memory_order_acq_rel);
      } catch (
          const std::
              exception&) {  // NOLINT(bugprone-empty-catch): half rotated: keep the current context, look again later
      }
    }
  }
  return {context_, generation_.load(std::memory_order_acquire)};
}

}  // namespace kube::detail
