#!/usr/bin/env bash
# CPU per job start of the node agent's JobRunner, from start() until the end is recorded, and jobs/s (issue 16,
# docs/benchmarks.md "Agent job start"): bench/agent-start/JobStartBench.java against the agent of REF.
#   bench/job-start.sh [--ref REF] [--jobs N (300)] [--rounds R (3)] [--account NAME|none (none)] [--in DIR (/tmp)]
#                      [--wrapper auto|native|shell (the agent's default)] [--confine] [-- COMMAND... (/bin/true)]
# --confine: cgroups per attempt as a root agent makes them (the node's groups under "jobstartbench").
# REF: a commit to measure instead of the working tree (e.g. e19ce7f, main's runner before issue 16); it is exported
# with git archive into a temporary directory and built there (offline), the working tree is left alone. DIR: where the
# job directories go (e.g. /dev/shm, a tmpfs, to leave out the disk file system's cost of creating their files).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ref="" jobs=300 rounds=3 account=none in=/tmp wrapper=() confine=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ref) ref="$2"; shift ;;
    --jobs) jobs="$2"; shift ;;
    --rounds) rounds="$2"; shift ;;
    --account) account="$2"; shift ;;
    --in) in="$2"; shift ;;
    --wrapper) wrapper=(-Dgpupool.bench.wrapper="$2"); shift ;;
    --confine) confine=(-Dgpupool.bench.confine=true) ;;
    --) shift; break ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ $# -gt 0 ] || set -- /bin/true
# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_use_jdk25
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$PWD
if [ -n "$ref" ]; then
  src="$tmp/src"; mkdir -p "$src"
  git archive "$ref" | tar -x -C "$src"
fi
( cd "$src" && ./mvnw -B -o -q -pl agent -am compile dependency:build-classpath -Dmdep.outputFile="$tmp/cp.txt" ) >"$tmp/build.log" 2>&1 \
  || { cat "$tmp/build.log"; exit 1; }
cp="$src/agent/target/classes:$(cat "$tmp/cp.txt")"
mkdir -p "$tmp/classes"
javac -d "$tmp/classes" -cp "$cp" bench/agent-start/JobStartBench.java
echo "agent of: ${ref:-the working tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- agent || echo ', modified'))}"
work=$(mktemp -d -p "$in")
trap 'rm -rf "$tmp" "$work"' EXIT
chmod 711 "$work"
echo "job directories in $work ($(stat -f -c %T "$work"))"
java -cp "$tmp/classes:$cp" --enable-native-access=ALL-UNNAMED "${wrapper[@]}" "${confine[@]}" JobStartBench "$work/work" "$jobs" "$rounds" "$account" "$@"
