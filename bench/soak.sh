#!/usr/bin/env bash
# The soak (issue 13; docs/benchmarks.md, "Soak"): a server and three agents run a mixed workload for MINUTES while a
# fault hits every 30-60 s (agent kill -9, a network partition, an agent paused, server kill -9); then the invariants
# are checked (no job lost, none run twice at once, every attempt's end recorded, no GPU beyond its sharing settings).
# As root, the partitions are real (a network namespace and a veth pair); otherwise a TCP proxy cuts the line.
#   bench/soak.sh [MINUTES (30)] [--stress] [--seed N]      report: soak-out/soak-report.txt
# --stress keeps both cores busy with two spinning processes for the whole run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
minutes=30 stress=0 seed=""
while [ $# -gt 0 ]; do
  case "$1" in
    --stress) stress=1 ;;
    --seed) seed="$2"; shift ;;
    *) minutes="$1" ;;
  esac
  shift
done
# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_use_jdk25
out="$PWD/soak-out"
rm -rf "$out" && mkdir -p "$out"
[ "$stress" = 1 ] && bench_saturate_cores
./mvnw -B -q -pl server -am verify -Dtest=SoakTest -Dsurefire.failIfNoSpecifiedTests=false \
  -Dgpupool.soak.minutes="$minutes" -Dgpupool.soak.dir="$out" ${seed:+-Dgpupool.soak.seed=$seed} >"$out/maven.log" 2>&1 \
  && status=0 || status=$?
cat "$out/soak-report.txt" 2>/dev/null || { echo "soak failed before its report; see $out/maven.log" >&2; tail -40 "$out/maven.log" >&2; }
exit "$status"
