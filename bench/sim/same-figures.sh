#!/usr/bin/env bash
# Same figures before and after an engine change (docs/benchmarks.md, "The engine as a framework"): runs
# `simulate --output json` on the Philly table for every policy, a 3,000-job synthetic comparison of every policy,
# and the openb inflation study (default pod list, seed 42), with each of two distribution jars, and diffs the
# outputs byte for byte.
# Usage: bench/sim/same-figures.sh BEFORE.jar AFTER.jar [OUTDIR]   (build a jar: ./mvnw -pl cli -am package -DskipTests,
#        then copy cli/target/gpupool.jar; check out the other commit and do the same)
# Traces from $TRACES (docs/traces.md; default $GPUPOOL_TRACES, else ../shared/traces beside the checkout).
set -euo pipefail
TRACES="$(realpath -m "${TRACES:-${GPUPOOL_TRACES:-$(dirname "${BASH_SOURCE[0]}")/../../../shared/traces}}")"
BEFORE=$1 AFTER=$2 OUT=${3:-$(mktemp -d)}
[ -f "$TRACES/philly/philly_jobs.csv" ] || { echo "no $TRACES/philly/philly_jobs.csv: download the public traces as docs/traces.md says (\"Getting the real traces\") and set TRACES to their folder" >&2; exit 2; }
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
POLICIES="fcfs fcfs-backfill priority fair-share qssf las srtf-oracle themis gittins"
run() {   # jar, output directory
    mkdir -p "$2"
    for p in $POLICIES; do
        "$JAVA" -jar "$1" simulate -q --trace "$TRACES/philly/philly_jobs.csv" --trace-format philly \
            --cluster 64x8:V100-32GB --policy "$p" --output json > "$2/philly-$p.json"
    done
    "$JAVA" -jar "$1" simulate -q --synthetic 3000 --cluster 8x8:A100-80GB --policy "${POLICIES// /,}" --output json > "$2/synthetic.json"
    "$JAVA" -jar "$1" simulate -q --mode inflation --trace-format openb \
        --trace "$TRACES/alibaba-openb/openb_pod_list_default.csv" --nodes "$TRACES/alibaba-openb/openb_node_list_gpu_node.csv" \
        --placement fgd,best-fit,binpack --seed 42 --output json > "$2/openb-default.json"
}
run "$BEFORE" "$OUT/before"
run "$AFTER" "$OUT/after"
if diff -r "$OUT/before" "$OUT/after"; then
    echo "same figures: $(ls "$OUT/after" | wc -l) outputs byte-identical ($OUT)"
else
    echo "figures differ ($OUT)"; exit 1
fi
