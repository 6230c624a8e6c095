#pragma once

// Internal: what the transport needs, resolved from a client_config and the
// client_params (kube/detail/transport_params.hpp).

#include <kube/config/client_config.hpp>
#include <kube/detail/transport_params.hpp>
#include <kube/rest/client_params.hpp>

namespace kube::detail {

transport_params to_settings(const client_config& c, client_params o);

}  // namespace kube::detail
