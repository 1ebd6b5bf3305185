#!/usr/bin/env bash
# Simulator speed (docs/benchmarks.md, "Simulator"): wall time of whole ./gpupool simulate runs, JVM start-up
# included, on the Philly table and on synthetic traces of 10k, 100k and 1M jobs (2 GiB heap).
# Usage: bench/sim/simulate-speed.sh [POLICY] [REPEATS]    (default: fcfs, 3; prints the best and all runs)
# The Philly table is read from $TRACES/philly/philly_jobs.csv (docs/traces.md; default TRACES: $GPUPOOL_TRACES, else ../shared/traces
# beside the checkout); without it the Philly run is skipped.
set -euo pipefail
TRACES="$(realpath -m "${TRACES:-${GPUPOOL_TRACES:-$(dirname "${BASH_SOURCE[0]}")/../../../shared/traces}}")"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
POLICY="${1:-fcfs}"
REPEATS="${2:-3}"
PHILLY=$TRACES/philly/philly_jobs.csv
./gpupool --version >/dev/null   # builds the distribution first if needed
# The first short simulate run of each kind (trace format) trains ./gpupool's start-up cache (cli/target/aot):
# run one of each, untimed, so the timed runs measure what a user gets from then on.
[ -f "$PHILLY" ] && ./gpupool simulate --trace "$PHILLY" --trace-format philly --cluster 64x8:V100-32GB \
    --policy "$POLICY" --quiet --output csv >/dev/null
./gpupool simulate --synthetic 10000,load=0.9 --seed 1 --cluster 128x8:A100-80GB --policy "$POLICY" --quiet --output csv >/dev/null

run() {   # label, then the simulate arguments
  local label="$1"; shift
  local results=()
  for _ in $(seq "$REPEATS"); do
    # wall and CPU seconds (user + system: on a shared machine CPU time is the steadier figure)
    results+=("$( { GPUPOOL_JAVA_OPTS="-Xmx2g ${GPUPOOL_JAVA_OPTS:-}" /usr/bin/time -f '%e %U %S' \
        ./gpupool simulate "$@" --policy "$POLICY" --quiet --output csv >/dev/null; } 2>&1 | tail -1)")
  done
  local best
  best=$(printf '%s\n' "${results[@]}" | sort -n | head -1)
  printf '%-24s best wall %6.2f s, CPU %6.2f s   (runs, wall user sys: %s)\n' "$label" \
    "$(echo "$best" | cut -d' ' -f1)" "$(echo "$best" | awk '{print $2 + $3}')" "$(IFS=';'; echo "${results[*]}")"
}

echo "policy $POLICY; $(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -f "$PHILLY" ]; then
  run "philly (82,247 jobs)" --trace "$PHILLY" --trace-format philly --cluster 64x8:V100-32GB
else
  echo "philly: skipped, $PHILLY not found"
fi
for n in 10000 100000 1000000; do
  run "synthetic $n" --synthetic "$n,load=0.9" --seed 1 --cluster 128x8:A100-80GB
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
