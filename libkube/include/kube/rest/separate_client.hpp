#pragma once

// kube::separate_client: the same apiserver, credentials and settings as a
// client, with connections and a rate limiter of its own.
//
// Coordination traffic (Lease renewals of leader election or of a sharded
// controller's membership) must not queue behind a controller's requests
// in the client-side rate limiter: a renewal that waits longer than the
// renew deadline costs the replica its Lease. client-go programs give
// leader election a client of its own for this reason; this makes one
// from a client already configured.

#include <kube/rest/client.hpp>

namespace kube {

/// A client with `c`'s server, TLS, credentials, QPS/burst, retries and
/// metrics provider, but its own keep-alive pool and its own token bucket.
/// Writes through it are not reported to `c`'s write observers (a
/// controller's read-your-writes memory). Thread safe.
[[nodiscard]] client separate_client(const client& c);

}  // namespace kube
