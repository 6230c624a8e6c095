# Sourced by the benchmark scripts that need a real cluster
# (test/bench/informer/run.sh, test/bench/decode/run.sh).
#
#   bench_build BUILD_DIR "CMAKE_TARGET..." "GO_PACKAGE..."
#       configures a Release build without sanitizers, builds the C++ targets,
#       the Go peers (into BUILD_DIR/go-bench/) and the test cluster.
#   bench_cluster_up BUILD_DIR
#       starts kube-apiserver + etcd in a temporary directory, torn down when
#       the script exits; sets $state (that directory, also for the script's
#       own files) and $kc (the admin kubeconfig).

bench_build() {
  local build=$1 targets=$2 go_pkgs=$3
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
  echo "== building (Release, no sanitizers) in $build" >&2
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKUBE_SANITIZE= -DKUBE_BUILD_SAMPLES=OFF >/dev/null
  # KUBE_BUILD_LOCK=FILE: build under `flock FILE` (a machine shared with other builds).
  # shellcheck disable=SC2086 # lists of words on purpose
  ${KUBE_BUILD_LOCK:+flock "$KUBE_BUILD_LOCK"} cmake --build "$build" --target $targets >&2
  # go build runs in the module's folder: the output path must be absolute
  # (a relative -B would put the peers under test/bench/go/).
  local out
  out=$(realpath -m "$build/go-bench")
  # shellcheck disable=SC2086
  (cd "$root/test/bench/go" && GOTOOLCHAIN=local go build -o "$out/" $go_pkgs)
  "$root/test/cluster/build.sh" "$build/bench-cluster" >&2
}

bench_cluster_up() {
  local build=$1
  state=$(mktemp -d)
  # The trap runs after the caller's function returns, so it names the paths itself.
  # shellcheck disable=SC2064
  trap "\"$build/bench-cluster/kcluster\" down --dir \"$state\" >/dev/null 2>&1 || true; rm -rf \"$state\"" EXIT
  # The apiserver alone: no controller traffic beside the benchmark's, and
  # no pod garbage collector for the pods the benchmarks bind to nodes that
  # do not exist.
  "$build/bench-cluster/kcluster" up --dir "$state" --watch-pid $$ --apiserver-only >&2
  kc="$state/kubeconfig/admin-cert.yaml"
  PATH="$build/bench-cluster:$PATH"  # kubectl of the apiserver's version
}
