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
# same output replaces an earlier one (the log is appended by every build);
# a step with several outputs is listed once (by a relative name).
awk -F'\t' '!/^#/ { step[$4] = $1 " " $2 " " $5 } END {
    for (o in step) if (!(step[o] in seen) || (seen[step[o]] ~ /^\// && o !~ /^\//)) seen[step[o]] = o
    for (k in seen) { split(k, a, " "); printf "%8.1f  %s\n", (a[2] - a[1]) / 1000, seen[k] } }' "$log" |
  sort -rn | head -n "$n"
