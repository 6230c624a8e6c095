#!/usr/bin/env bash
# slowest-tus.sh BUILD_DIR [N]: the N (default 10) slowest build steps of the
# last build of BUILD_DIR, from ninja's log (.ninja_log), as "seconds  output".
# A step's time is its wall time under the build's parallelism, so on a busy
# machine it is higher than the step alone would take; read it to rank, not to
# time. scripts/test.sh prints it after each build.
set -euo pipefail
log=${1:?usage: slowest-tus.sh BUILD_DIR [N]}/.ninja_log
n=${2:-10}
[[ -f $log ]] || { echo "slowest-tus: no $log" >&2; exit 1; }
# Fields: start ms, end ms, mtime, output, command hash. A later line for the
# same output replaces an earlier one (the log is appended by every build).
awk -F'\t' '!/^#/ { t[$4] = ($2 - $1) / 1000 } END { for (o in t) printf "%8.1f  %s\n", t[o], o }' "$log" |
  sort -rn | head -n "$n"
