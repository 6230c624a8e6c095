#!/usr/bin/env bash
# Installs every Debian package the project needs to build, test and run its
# samples. Idempotent: packages already present are skipped, and apt-get is
# not touched at all when nothing is missing.
set -euo pipefail

packages=(
  build-essential g++ cmake ninja-build ccache pkg-config git
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libboost-system1.81-dev libboost-program-options1.81-dev
  libssl-dev libyaml-cpp-dev zlib1g-dev catch2 openssl ca-certificates curl
  libprotozero-dev   # protobuf wire format (header-only): the generated protobuf codecs
  prometheus-cpp-dev   # kube::prometheus: metric families and the text format (its core library only)
  python3
  clang-16 libclang-rt-16-dev libc++-16-dev libc++abi-16-dev clang-tidy-16   # second compiler and standard library, their sanitizer runtimes, clang-tidy (scripts/test.sh)
  llvm-16   # llvm-symbolizer: sanitizer reports with function names and lines (scripts/test.sh)
  clang-format   # the formatting check (clang-format 14: .clang-format's output is pinned to it)
  dpkg-dev   # dpkg-source: scripts/libcxx-deps.sh unpacks Debian sources of yaml-cpp and prometheus-cpp
  doxygen   # API reference (docs/, ctest docs.doxygen); no graphviz: no diagrams
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Go builds the test cluster and the client-go benchmark peers. Debian 12's
# golang-go (1.19) is too old for Kubernetes 1.34, so it is required, not installed.
if ! command -v go >/dev/null 2>&1; then
  echo "install-deps: error: no 'go' on PATH; Go >= 1.24 is needed to build the test cluster" >&2
  exit 1
fi
gover=$(GOTOOLCHAIN=local go env GOVERSION | sed 's/^go//')
if [[ $(printf '%s\n1.24\n' "${gover%%[a-z-]*}" | sort -V | head -1) != 1.24 ]]; then
  echo "install-deps: error: Go $gover is too old; Go >= 1.24 is needed to build the test cluster" >&2
  exit 1
fi

if ((${#missing[@]} == 0)); then
  echo "install-deps: all packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
