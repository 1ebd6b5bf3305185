#!/usr/bin/env bash
# Jobs started end to end and what a start costs the server, the agents and the job wrappers (AgentStartBench,
# docs/benchmarks.md "Node agent: jobs started per second end to end"), for the working tree or for REF.
#   bench/agent-start-e2e.sh [--ref REF] [--rounds R (20)] [--jobs N (1200)] [--drop-caches] [-- -Dgpupool.agent.bench...]
# REF: a commit to measure with this tree's bench (AgentStartBench and AgentProcessMain are copied over it); it is
# exported with git archive into a temporary directory and built there (offline), the working tree is left alone.
# --drop-caches (root): drops the page cache first, which lets the kernel free the memory cgroups of earlier runs' jobs
# (each removed one lingers while pages are charged to it, and thousands of them make every cgroup operation dearer):
# runs compared with it start alike. The steady state line is the one to compare: the first bursts warm the JIT up.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ref="" rounds=20 jobs=1200 drop=0
while [ $# -gt 0 ]; do
  case "$1" in
    --ref) ref="$2"; shift ;;
    --rounds) rounds="$2"; shift ;;
    --jobs) jobs="$2"; shift ;;
    --drop-caches) drop=1 ;;
    --) shift; break ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_use_jdk25
src=$PWD
if [ -n "$ref" ]; then
  src=$(mktemp -d)
  trap 'rm -rf "$src"' EXIT
  git archive "$ref" | tar -x -C "$src"
  for f in server/src/test/java/io/gpupool/server/bench/AgentStartBench.java server/src/test/java/io/gpupool/server/AgentProcessMain.java; do
    cp "$f" "$src/$f"
  done
fi
echo "server and agents of: ${ref:-the working tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ', modified'))}"
if [ "$drop" = 1 ]; then sync; echo 1 > /proc/sys/vm/drop_caches; fi
echo "memory cgroups on this machine: $(awk '$1 == "memory" { print $3 }' /proc/cgroups)"
cd "$src"
./mvnw -B -o -q -pl server -am -Dtest=AgentStartBench -Dsurefire.failIfNoSpecifiedTests=false -Dgpupool.agent.bench=true \
  -Dgpupool.agent.bench.rounds="$rounds" -Dgpupool.agent.bench.jobs="$jobs" "$@" verify -DskipITs | sed '/^\[/d; /^$/d'
