#!/usr/bin/env bash
# How each policy's replay time grows with the trace (docs/benchmarks.md, "Parallel comparison and round cost
# (issue 16)"; issue 16, must-show 1): whole `./gpupool simulate` runs, JVM start-up included, one policy per
# run, on seeded synthetic traces (`--synthetic N,load=0.9 --seed 1`, 128x8:A100-80GB as in simulate-speed.sh).
# Each run is cut off after TIMEOUT seconds and reported as "over T s" (and the policy is not run on the larger
# traces), so a slow policy cannot hold the machine for an hour; a run that fails (e.g. out of heap) is reported with its exit status and last error line.
#
# Usage: bench/sim/policy-scaling.sh                       (all policies, 10k 100k 1M 10M jobs)
# Environment: POLICIES (comma-separated; default the nine registered), SIZES (default "10000 100000 1000000
# 10000000"), TIMEOUT (seconds per run, default 300), HEAP (default 2g), CLUSTER (default 128x8:A100-80GB).
# The synthetic trace is generated as the replay pulls it (no file, no memory for the trace itself), so 10M
# jobs need no more heap than 1M: the replay holds only the queued and running jobs.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
POLICIES="${POLICIES:-fcfs,fcfs-backfill,priority,fair-share,qssf,las,srtf-oracle,themis,gittins}"
SIZES="${SIZES:-10000 100000 1000000 10000000}"
TIMEOUT="${TIMEOUT:-300}"
HEAP="${HEAP:-2g}"
CLUSTER="${CLUSTER:-128x8:A100-80GB}"
./gpupool --version >/dev/null || exit 1   # builds the distribution first if needed
# fcfs-only short runs use ./gpupool's start-up cache, trained by the first such run: train it untimed
# (as simulate-speed.sh does), so the timed runs measure what a user gets from then on.
case ",$POLICIES," in *,fcfs,*) ./gpupool simulate --synthetic 10000,load=0.9 --seed 1 --cluster "$CLUSTER" --policy fcfs \
  --quiet --output csv >/dev/null ;; esac
declare -A over   # policy -> the size it ran out of time at: larger sizes are not run
err=$(mktemp)
trap 'rm -f "$err"' EXIT
echo "timeout ${TIMEOUT} s per run, heap $HEAP, cluster $CLUSTER; $(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %10s  %s\n' policy jobs "wall / CPU (user+sys) / peak RSS"
for n in $SIZES; do
  for policy in ${POLICIES//,/ }; do
    if [ -n "${over[$policy]:-}" ]; then
      printf '%-14s %10s  %s\n' "$policy" "$n" "not run (over $TIMEOUT s at ${over[$policy]} jobs)"
      continue
    fi
    # %e wall, %U user, %S sys, %M peak RSS in KiB (of the JVM: timeout waits for it)
    # (time's line goes to the same file as the run's own errors)
    GPUPOOL_JAVA_OPTS="-Xmx$HEAP ${GPUPOOL_JAVA_OPTS:-}" /usr/bin/time -f 'TIME %e %U %S %M %x' \
      timeout "$TIMEOUT" ./gpupool simulate --synthetic "$n,load=0.9" --seed 1 --cluster "$CLUSTER" \
      --policy "$policy" --quiet --output csv >/dev/null 2>"$err"
    t=$(grep '^TIME' "$err" | tail -1)
    read -r _ wall user sys rss rc <<<"$t"
    if [ "${rc:-1}" = 124 ]; then
      result="over $TIMEOUT s (CPU $(echo "$user + $sys" | bc) s by then, peak RSS $((rss / 1024)) MB)"
      over[$policy]=$n
    elif [ "${rc:-1}" != 0 ]; then
      result="failed, exit ${rc:-?}: $(grep -v -e '^TIME' -e '^Command exited' "$err" | tail -1)"
    else
      result=$(printf '%7.1f s / %7.1f s / %5d MB' "$wall" "$(echo "$user + $sys" | bc)" $((rss / 1024)))
    fi
    printf '%-14s %10s  %s\n' "$policy" "$n" "$result"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
