#!/usr/bin/env bash
# Issue 13, must-show 1: the fault tests (AgentFaultTest, AgentPartitionTest) RUNS times in a row, with both cores
# kept busy by two spinning processes (--quiet: without them). A failing run is a bug to find, never to retry.
#   bench/fault-stress.sh [RUNS (20)] [--quiet] [--tests A,B] [--module M (server)]     log: fault-stress-out/
# e.g. the Kubernetes gang test 30 times: bench/fault-stress.sh 30 --module k8s --tests SecondarySchedulerTest
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=20 stress=1 tests="AgentFaultTest,AgentPartitionTest" module=server
while [ $# -gt 0 ]; do
  case "$1" in
    --quiet) stress=0 ;;
    --tests) tests="$2"; shift ;;
    --module) module="$2"; shift ;;
    *) runs="$1" ;;
  esac
  shift
done
# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_use_jdk25
out="$PWD/fault-stress-out"
rm -rf "$out" && mkdir -p "$out"
./mvnw -B -q -pl "$module" -am install -DskipTests >"$out/build.log" 2>&1   # once; each run then only tests the module
[ "$stress" = 1 ] && bench_saturate_cores
passed=0
for i in $(seq 1 "$runs"); do
  t0=$(date +%s)
  if ./mvnw -B -q -o -pl "$module" surefire:test -Dtest="$tests" -Dsurefire.failIfNoSpecifiedTests=false \
      -Dgpupool.fault.keep="$out/logs-$i" >"$out/run-$i.log" 2>&1; then
    passed=$((passed + 1)); verdict=pass; rm -rf "$out/logs-$i"   # the rig's process logs are kept for failed runs only
  else
    verdict=FAIL; cp -r "$module/target/surefire-reports" "$out/reports-$i"
  fi
  echo "run $i/$runs: $verdict in $(( $(date +%s) - t0 )) s (load $(cut -d' ' -f1 /proc/loadavg))" | tee -a "$out/summary.txt"
done
echo "$passed of $runs runs passed ($([ "$stress" = 1 ] && echo 'both cores saturated' || echo 'quiet'))" | tee -a "$out/summary.txt"
[ "$passed" = "$runs" ]
