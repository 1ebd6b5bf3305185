#!/usr/bin/env bash
# CPU time this machine spends creating processes: what starting a job costs a node before the job's own work
# (docs/benchmarks.md, "Node agent"). Usage: bench/spawn-cost.sh [COUNT]
set -euo pipefail
n=${1:-300}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# the agent's shell job wrapper (ShellWrapper.WRAPPER, without its cgroup step), run as the agent runs it, with `true`
# as the job's command; the native one (agent/src/main/c/jobwrap.c) where the agent's build made it
native="$(ls agent/target/classes/io/gpupool/agent/run/gpupool-jobwrap-* 2>/dev/null | head -1 || true)"
printf 'PATH=/usr/bin:/bin\0\0' > "$dir/env"
printf "export PATH='/usr/bin:/bin'\nEND\n" > "$dir/exports"
wrapper='d=$1; shift; echo $$ > "$d/pid"; trap : TERM INT HUP; "$@"; rc=$?; echo $rc > "$d/exit"; exit $rc'
measure() { # NAME COMMAND...: CPU ms per run (user+sys, the children included), COUNT runs one after the other,
            # each with stdin from the file $input (/dev/null where unset)
    local name=$1; shift
    local TIMEFORMAT='%3U %3S'
    local t
    t=$( { time (for ((i = 0; i < n; i++)); do "$@" < "${input:-/dev/null}" > /dev/null; done) ; } 2>&1 )
    awk -v name="$name" -v n="$n" -v u="${t% *}" -v s="${t#* }" \
        'BEGIN { printf "%-34s %6.2f ms CPU per run (user %.2f, sys %.2f)\n", name, (u + s) * 1000 / n, u * 1000 / n, s * 1000 / n }'
}
echo "spawn cost: $n runs each; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
measure "fork+exec of /bin/true" /bin/true
measure "job chain: setsid sh WRAPPER true" setsid /bin/sh -c "$wrapper" gpupool-job "$dir" true
if [ -n "$native" ]; then input="$dir/env" measure "job chain: native wrapper, true" "$native" "$dir" -- true; fi
if [ "$(id -u)" = 0 ]; then  # the account switch: the shell wrapper's setpriv and the account's shell, or the native one
    nobody="$(id -u nobody) $(id -g nobody) $(id -G nobody | tr ' ' ,)"
    # the shell wrapper's execs as it switches (its account side reduced to reading the environment and exec)
    account_side='while IFS= read -r l; do [ "$l" = END ] && break; eval "$l"; done; exec "$@"'
    input="$dir/exports" measure "  as nobody: sh, setpriv, sh, true" /bin/sh -c "$wrapper" gpupool-job "$dir" setpriv --reuid=65534 --regid=65534 --init-groups \
        --inh-caps=-all --bounding-set=-all -- /bin/sh -c "$account_side" gpupool-enter true
    # shellcheck disable=SC2086
    if [ -n "$native" ]; then input="$dir/env" measure "  as nobody: native wrapper, true" "$native" "$dir" --account $nobody --chdir /tmp -- true; fi
fi
