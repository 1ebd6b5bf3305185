#!/usr/bin/env bash
# Start-up and warm-up against the replay itself, per policy on the full Philly table (docs/benchmarks.md, issue 16,
# "Start-up and warm-up against the replay itself"): the launcher's whole run (./gpupool with its start-up cache,
# trained first, untimed; best of REPEATS) beside the same command run RUNS times in one JVM (bench/sim/WarmReplay.java:
# the first run, then the best and median of the later ones, on compiled code) and the JIT's compile time in a
# launcher run (-XX:+CITime). The difference between the launcher's run and a warm replay is what JVM start-up,
# class loading and the JIT's warm-up cost on this machine; engine work alone cannot take it away.
# Usage: bench/sim/warm-split.sh [POLICY...]     (default: the nine policies)
# Environment: TRACES (default $GPUPOOL_TRACES, else ../shared/traces beside the checkout), REPEATS (2), RUNS (6).
set -euo pipefail
TRACES="$(realpath -m "${TRACES:-${GPUPOOL_TRACES:-$(dirname "${BASH_SOURCE[0]}")/../../../shared/traces}}")"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[ $# -gt 0 ] || set -- fcfs fcfs-backfill priority fair-share qssf las srtf-oracle themis gittins
PHILLY=$TRACES/philly/philly_jobs.csv
[ -f "$PHILLY" ] || { echo "no $PHILLY: see docs/traces.md (\"Getting the real traces\") and set TRACES" >&2; exit 1; }
./gpupool --version >/dev/null   # builds the distribution first if needed
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
echo "$(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %14s %12s %16s %16s\n' policy launcher "JIT CPU" "in-JVM: first" "later: best/med"
for p in "$@"; do
  args=(simulate --trace "$PHILLY" --trace-format philly --cluster 64x8:V100-32GB --policy "$p" --quiet --output json)
  ./gpupool "${args[@]}" >/dev/null   # trains the start-up cache when it is missing or older than the jar
  best=""
  for i in $(seq "${REPEATS:-2}"); do
    s=$(date +%s.%N); ./gpupool "${args[@]}" >/dev/null; e=$(date +%s.%N)
    best=$(awk -v a="$best" -v b="$(echo "$e - $s" | bc)" 'BEGIN { print (a == "" || b < a) ? b : a }')
  done
  jit=$(GPUPOOL_JAVA_OPTS=-XX:+CITime ./gpupool "${args[@]}" 2>&1 >/dev/null | sed -n 's/^ *Total compilation time *: *\([0-9.]*\) s.*/\1/p')
  warm=$("$JAVA" --sun-misc-unsafe-memory-access=allow -XX:+UseSerialGC -cp cli/target/gpupool.jar bench/sim/WarmReplay.java \
      "${RUNS:-6}" "${args[@]}" | sed -n 's/^first \([0-9]*\) ms; later runs: min \([0-9]*\) ms, median \([0-9]*\) ms/\1 \2 \3/p')
  read -r first min med <<<"$warm"
  printf '%-14s %12.2f s %10s s %14.2f s %8.2f / %.2f s\n' "$p" "$best" "$jit" "$(echo "$first / 1000" | bc -l)" \
      "$(echo "$min / 1000" | bc -l)" "$(echo "$med / 1000" | bc -l)"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
