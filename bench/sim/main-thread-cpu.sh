#!/usr/bin/env bash
# Main-thread CPU seconds of one Philly replay (docs/benchmarks.md, issue 16, "Backfilling path"): the replay runs
# on the JVM's main thread while C2 and GC run beside it, so on a busy 2-core machine this is steadier than wall
# time. Reads utime+stime of the main thread (the first thread after the launcher's, named "java") from
# /proc/PID/task/TID/stat every 50 ms until the JVM exits; prints the last reading and the wall time.
# Usage: bench/sim/main-thread-cpu.sh JAR POLICY [OUT.json]      (traces: $TRACES, else ../shared/traces)
set -euo pipefail
TRACES="$(realpath -m "${TRACES:-${GPUPOOL_TRACES:-$(dirname "${BASH_SOURCE[0]}")/../../../shared/traces}}")"
JAR=$1 P=$2 OUT=${3:-/dev/null}
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
HZ=$(getconf CLK_TCK)
start=$(date +%s.%N)
"$JAVA" -jar "$JAR" simulate -q --trace "$TRACES/philly/philly_jobs.csv" --trace-format philly \
    --cluster 64x8:V100-32GB --policy "$P" --output json > "$OUT" &
pid=$!
last=0
while kill -0 "$pid" 2>/dev/null; do
  for t in $(ls /proc/$pid/task 2>/dev/null | sort -n); do
    [ "$t" = "$pid" ] && continue
    [ "$(cat /proc/$pid/task/$t/comm 2>/dev/null)" = java ] || continue
    s=$(awk '{print $14+$15}' /proc/$pid/task/$t/stat 2>/dev/null || true)
    [ -n "$s" ] && last=$s
    break
  done
  sleep 0.05
done
wait "$pid"
end=$(date +%s.%N)
awk -v p="$P" -v t="$last" -v hz="$HZ" -v s="$start" -v e="$end" 'BEGIN { printf "%s main-thread %.2f s, wall %.1f s\n", p, t / hz, e - s }'
