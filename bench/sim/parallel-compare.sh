#!/usr/bin/env bash
# Parallel policy comparison (docs/benchmarks.md, "Parallel comparison and round cost (issue 16)"): one
# `simulate` of seven policies over the Philly table, replayed one after the other (--threads 1) and in
# parallel (--threads N, default: one per processor), timed with wall, CPU (user + sys) and peak RSS; the
# outputs must be byte-identical.
# Usage: bench/sim/parallel-compare.sh [THREADS...]     (default: 1 and the processor count)
# Environment: JAR (default cli/target/gpupool.jar), TRACES (default $GPUPOOL_TRACES, else ../shared/traces beside the checkout),
# POLICIES (default the seven below), HEAP (default 2g).
set -euo pipefail
TRACES="$(realpath -m "${TRACES:-${GPUPOOL_TRACES:-$(dirname "${BASH_SOURCE[0]}")/../../../shared/traces}}")"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
JAR="${JAR:-cli/target/gpupool.jar}"
POLICIES="${POLICIES:-fcfs,fcfs-backfill,priority,fair-share,qssf,las,srtf-oracle}"
PHILLY=$TRACES/philly/philly_jobs.csv
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
[ -f "$JAR" ] || { echo "no $JAR: build it first (./mvnw -o -q -pl cli -am package -DskipTests)" >&2; exit 1; }
[ -f "$PHILLY" ] || { echo "no $PHILLY: download the Philly table as docs/traces.md says (\"Getting the real traces\") and set TRACES to its folder" >&2; exit 1; }
[ $# -gt 0 ] && set -- "$@" || set -- 1 "$(nproc)"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "policies $POLICIES; $(nproc) CPUs; heap ${HEAP:-2g}"
for n in "$@"; do
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  # %e wall, %U user, %S sys, %M peak RSS (KiB)
  t=$( { /usr/bin/time -f '%e %U %S %M' "$JAVA" --sun-misc-unsafe-memory-access=allow "-Xmx${HEAP:-2g}" -jar "$JAR" simulate \
        --trace "$PHILLY" --trace-format philly --cluster 64x8:V100-32GB --policy "$POLICIES" \
        --threads "$n" --quiet --output json >"$out/threads-$n.json"; } 2>&1 | tail -1)
  read -r wall user sys rss <<<"$t"
  printf 'threads %-3s wall %7.1f s   CPU %7.1f s (user %s, sys %s)   peak RSS %5d MB   load before %s\n' \
    "$n" "$wall" "$(echo "$user + $sys" | bc)" "$user" "$sys" $((rss / 1024)) "$load"
done
first="$out/threads-$1.json"
for n in "$@"; do
  cmp -s "$first" "$out/threads-$n.json" && echo "threads $n: output identical to threads $1" \
    || { echo "threads $n: OUTPUT DIFFERS from threads $1" >&2; exit 1; }
done
[ -n "${KEEP:-}" ] && cp "$first" "$KEEP"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
