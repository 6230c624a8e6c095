#!/usr/bin/env bash
# Builds yaml-cpp and prometheus-cpp's core library with clang++-16 and libc++,
# for a build of the project with libc++: Debian's libyaml-cpp-dev and
# prometheus-cpp-dev are compiled against libstdc++, so libc++ code cannot link
# them. The sources are Debian's own source packages of the versions installed
# (scripts/install-deps.sh), Debian's patches applied, so both builds use the
# same code. Static, -fPIC, Release (-O2), no sanitizers and no warnings
# (third-party code, as in Debian's builds), no tests, tools or pull/push/
# compression parts: prometheus-cpp's core library alone.
#
#   prefix=$(scripts/libcxx-deps.sh [ROOT])
#   cmake ... -DCMAKE_PREFIX_PATH="$prefix"   # find_package(yaml-cpp), (prometheus-cpp CONFIG)
#
# The libraries are installed into ROOT/<key> (ROOT defaults to
# ~/.cache/kube-sdk/libcxx), where <key> hashes this script, clang++-16's
# version and the two source package versions; that prefix is the only line
# on stdout (everything else goes to stderr). A prefix whose stamp file exists
# is reused at once; another run of the same key waits for the first (flock).
# The sources come from deb.debian.org (bookworm, deb-src) through a private
# apt sources list and lists directory in a temporary folder: /etc/apt and
# apt's own state are not touched. Needs dpkg-source (dpkg-dev, installed if
# missing), cmake, ninja, clang-16, libc++-16-dev and libc++abi-16-dev.
# Environment: KUBE_JOBS (default nproc).
set -euo pipefail
exec 3>&1 1>&2  # stdout is for the prefix alone
script=$(readlink -f "$0")
root=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/kube-sdk/libcxx}
jobs=${KUBE_JOBS:-$(nproc)}

srcver() { # the source package version of an installed binary package
  local v
  v=$(dpkg-query -W -f='${source:Version}' "$1" 2>/dev/null) || true
  [[ -n $v ]] || { echo "libcxx-deps: error: $1 is not installed (scripts/install-deps.sh)" >&2; exit 1; }
  echo "$v"
}
yaml_ver=$(srcver libyaml-cpp-dev)
prom_ver=$(srcver prometheus-cpp-dev)
key=$({ cat "$script"; clang++-16 --version | head -1; echo "$yaml_ver $prom_ver"; } | sha256sum | cut -c1-16)
prefix=$root/$key
stamp=$prefix/.libcxx-deps-complete

mkdir -p "$root"
exec 9>"$prefix.lock"
flock 9
if [[ -f $stamp ]]; then
  echo "libcxx-deps: cached: yaml-cpp $yaml_ver, prometheus-cpp $prom_ver in $prefix"
  echo "$prefix" >&3
  exit 0
fi
rm -rf "$prefix"

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
if ! command -v dpkg-source >/dev/null; then
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends dpkg-dev
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "libcxx-deps: downloading the sources of yaml-cpp $yaml_ver and prometheus-cpp $prom_ver"
mkdir -p "$tmp/apt/parts" "$tmp/apt/lists/partial" "$tmp/apt/cache/archives/partial" "$tmp/src"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
  >"$tmp/apt/sources.list"
apt=(apt-get -q -o APT::Sandbox::User=root -o Dir::Etc::SourceList="$tmp/apt/sources.list"
  -o Dir::Etc::SourceParts="$tmp/apt/parts" -o Dir::State::Lists="$tmp/apt/lists" -o Dir::Cache="$tmp/apt/cache")
"${apt[@]}" update >/dev/null
(cd "$tmp/src" && "${apt[@]}" source --download-only "yaml-cpp=$yaml_ver" "prometheus-cpp=$prom_ver" >/dev/null)
# apt checked every file against the signed Release file; dpkg-source only unpacks and patches.
for name in yaml-cpp prometheus-cpp; do dpkg-source --no-check -x "$tmp/src/$name"_*.dsc "$tmp/src/$name" >/dev/null; done

build() { # NAME CMAKE-OPTION...
  local name=$1; shift
  echo "libcxx-deps: building $name"
  cmake -S "$tmp/src/$name" -B "$tmp/build/$name" -G Ninja -Wno-dev --no-warn-unused-cli \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
    -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16 \
    -DCMAKE_CXX_FLAGS="-stdlib=libc++ -w" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DCMAKE_EXE_LINKER_FLAGS=-stdlib=libc++ -DCMAKE_SHARED_LINKER_FLAGS=-stdlib=libc++ \
    -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON "$@" >/dev/null
  cmake --build "$tmp/build/$name" -j "$jobs"
  cmake --install "$tmp/build/$name" >/dev/null
}
build yaml-cpp -DYAML_BUILD_SHARED_LIBS=OFF -DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF -DYAML_CPP_BUILD_CONTRIB=ON
build prometheus-cpp -DENABLE_PULL=OFF -DENABLE_PUSH=OFF -DENABLE_COMPRESSION=OFF -DENABLE_TESTING=OFF \
  -DUSE_THIRDPARTY_LIBRARIES=OFF -DGENERATE_PKGCONFIG=OFF

echo "yaml-cpp $yaml_ver, prometheus-cpp $prom_ver, $(clang++-16 --version | head -1), libc++" >"$stamp"
echo "libcxx-deps: built into $prefix"
echo "$prefix" >&3
