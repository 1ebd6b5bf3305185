#!/usr/bin/env bash
# CPU time this machine spends creating processes: what starting a job costs a node before the job's own work
# (docs/benchmarks.md, "Node agent"). Usage: bench/spawn-cost.sh [COUNT]
set -euo pipefail
n=${1:-300}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# the agent's job wrapper (JobRunner.WRAPPER), run as the agent runs it, with `true` as the job's command
wrapper='d=$1; shift; echo $$ > "$d/pid"; trap : TERM INT HUP; "$@"; rc=$?; echo $rc > "$d/exit"; exit $rc'
measure() { # NAME COMMAND...: CPU ms per run (user+sys, the children included), COUNT runs one after the other
    local name=$1; shift
    local TIMEFORMAT='%3U %3S'
    local t
    t=$( { time (for ((i = 0; i < n; i++)); do "$@" > /dev/null; done) ; } 2>&1 )
    awk -v name="$name" -v n="$n" -v u="${t% *}" -v s="${t#* }" \
        'BEGIN { printf "%-34s %6.2f ms CPU per run (user %.2f, sys %.2f)\n", name, (u + s) * 1000 / n, u * 1000 / n, s * 1000 / n }'
}
echo "spawn cost: $n runs each; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
measure "fork+exec of /bin/true" /bin/true
measure "job chain: setsid sh WRAPPER true" setsid /bin/sh -c "$wrapper" gpupool-job "$dir" true
