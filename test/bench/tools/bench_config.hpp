#pragma once

// How the C++ benchmark programs that talk to the cluster load their
// client settings: the kubeconfig run.sh hands them, nothing from the
// environment.

#include <kube/client_config.hpp>

#include <string>

namespace kube_bench {

inline kube::client_config load_config(const std::string& kubeconfig) {
  kube::load_default_params lp;
  lp.kubeconfig.explicit_path = kubeconfig;
  return kube::client_config::load_default(lp);
}

}  // namespace kube_bench
