#pragma once

// How the C++ benchmark programs that talk to the cluster load their
// client settings: from the kubeconfig run.sh hands them (--kubeconfig), as
// `kubectl --kubeconfig` would; an empty path falls back to the usual
// search (KUBECONFIG, ~/.kube/config, in-cluster).

#include <kube/config/client_config.hpp>

#include <string>

namespace kube_bench {

inline kube::client_config load_config(const std::string& kubeconfig) {
  kube::load_default_params lp;
  lp.kubeconfig.explicit_path = kubeconfig;
  return kube::client_config::load_default(lp);
}

}  // namespace kube_bench
