#pragma once

// Internal: the client's TLS context.

#include <kube/detail/transport_params.hpp>

#include <boost/asio/ssl/context.hpp>

#include <memory>
#include <string>

namespace kube::detail {

/// Builds the TLS context: verification on unless insecure, CA from PEM or
/// the system's roots, client certificate and key. Throws kube::error
/// (tls_error, invalid_config); messages name the file, never the key material.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const transport_params& s);

/// OpenSSL's queued errors as one line (and clears the queue).
std::string openssl_error_text();

}  // namespace kube::detail
