#!/usr/bin/env bash
# Each policy on the full Philly table as a user runs it (docs/benchmarks.md, "Start-up caches for every policy"):
# wall time, CPU (user + sys) and peak RSS of whole runs, JVM start-up included, three ways:
#   plain    java -jar cli/target/gpupool.jar (G1, no start-up cache: the figures of the earlier sections)
#   first    ./gpupool, the first run of its kind: it trains the start-up cache (cli/target/aot)
#   cached   ./gpupool again, REPEATS times, with the cache
# Every output must be byte-identical to the plain run's.
# Usage: bench/sim/policy-start.sh [REPEATS] [POLICY...]   (default: 2, the nine policies and the seven-policy list)
# Environment: TRACES (default $GPUPOOL_TRACES, else ../shared/traces beside the checkout), THREADS (for lists, default 2).
set -euo pipefail
TRACES="$(realpath -m "${TRACES:-${GPUPOOL_TRACES:-$(dirname "${BASH_SOURCE[0]}")/../../../shared/traces}}")"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
REPEATS="${1:-2}"; shift || true
[ $# -gt 0 ] || set -- fcfs fcfs-backfill priority fair-share qssf las srtf-oracle themis gittins \
    fcfs,fcfs-backfill,priority,fair-share,qssf,las,srtf-oracle
PHILLY=$TRACES/philly/philly_jobs.csv
[ -f "$PHILLY" ] || { echo "no $PHILLY: see docs/traces.md (\"Getting the real traces\") and set TRACES" >&2; exit 1; }
./gpupool --version >/dev/null   # builds the distribution first if needed
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

timed() {   # label, output file, command...: prints "wall cpu rss"
  local label="$1" file="$2"; shift 2
  local t
  t=$( { /usr/bin/time -f '%e %U %S %M' "$@" >"$file"; } 2>&1 | tail -1)
  read -r wall user sys rss <<<"$t"
  printf '  %-8s wall %6.2f s   CPU %6.2f s   peak RSS %5d MB\n' "$label" "$wall" "$(echo "$user + $sys" | bc)" $((rss / 1024))
}

echo "$(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for p in "$@"; do
  args=(simulate --trace "$PHILLY" --trace-format philly --cluster 64x8:V100-32GB --policy "$p" --quiet --output json)
  case "$p" in *,*) args+=(--threads "${THREADS:-2}") ;; esac
  echo "$p"
  rm -f "cli/target/aot/simulate-replay-philly-$(echo "$p" | tr -c 'A-Za-z0-9_.\n-' '_').aot"
  timed plain "$out/plain.json" "$JAVA" --sun-misc-unsafe-memory-access=allow -jar cli/target/gpupool.jar "${args[@]}"
  timed first "$out/first.json" ./gpupool "${args[@]}"
  cmp -s "$out/plain.json" "$out/first.json" || { echo "OUTPUT DIFFERS: $p, first run" >&2; exit 1; }
  for i in $(seq "$REPEATS"); do
    timed cached "$out/cached.json" ./gpupool "${args[@]}"
    cmp -s "$out/plain.json" "$out/cached.json" || { echo "OUTPUT DIFFERS: $p, cached run $i" >&2; exit 1; }
  done
done
echo "every output identical to the plain run's; load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
