#pragma once

// Internal: the client's TLS context.

#include <kube/detail/transport_params.hpp>

#include <boost/asio/ssl/context.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kube::detail {

/// Builds the TLS context: verification on unless insecure, CA from PEM or
/// the system's roots, client certificate and key. Throws kube::error
/// (tls_error, invalid_config); messages name the file, never the key material.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const transport_params& s);

/// OpenSSL's queued errors as one line (and clears the queue).
std::string openssl_error_text();

/// The client's TLS context, built again when the files it came from change
/// (certificate rotation, an in-cluster CA rotated): the files named by
/// transport_params' ca_file, client_cert_file and client_key_file are
/// looked at (stat: device, inode, size, modification time) when a
/// connection is opened, at most once a second. Material that does not
/// load (a rotation half done: a new certificate with the old key) leaves
/// the current context in use until the next look. Thread-safe.
class tls_source {
public:
  /// Throws as make_tls_context.
  explicit tls_source(transport_params s);

  struct snapshot {
    std::shared_ptr<boost::asio::ssl::context> context;
    std::uint64_t generation = 0;  ///< grows with each reload
  };
  /// The context for a new connection, reloaded first if its files changed.
  [[nodiscard]] snapshot current();
  /// The generation current() last returned: a pooled connection of an
  /// older one is not reused.
  [[nodiscard]] std::uint64_t generation() const noexcept { return generation_.load(std::memory_order_acquire); }

private:
  struct file_id {
    bool present = false;
    unsigned long long dev = 0, ino = 0;
    long long size = 0, mtime_sec = 0, mtime_nsec = 0;
    bool operator==(const file_id&) const = default;
  };
  [[nodiscard]] std::vector<file_id> look() const;

  transport_params params_;  // the PEM fields as first read; the files' paths
  std::mutex m_;
  std::shared_ptr<boost::asio::ssl::context> context_;  // m_
  std::vector<file_id> files_;                          // m_: as when context_ was built
  std::chrono::steady_clock::time_point looked_{};      // m_
  std::atomic<std::uint64_t> generation_{0};
};

}  // namespace kube::detail
