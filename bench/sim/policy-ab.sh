#!/usr/bin/env bash
# Two builds of gpupool on the full Philly table, run the way ./gpupool runs a short replay (serial collector, the
# launcher's inlining limit, a start-up cache trained for each jar and kind of run), interleaved so that this VM's
# drifting speed falls on both alike (docs/benchmarks.md, "Allocation per round"). Prints wall and CPU (user + sys)
# of each run and the medians per policy; every output must be byte-identical between the two.
# Usage: bench/sim/policy-ab.sh BEFORE.jar AFTER.jar [REPEATS] [POLICY...]
#        (default: 2, the nine policies and the seven-policy list; build a jar with ./mvnw -pl cli -am package
#        -DskipTests and copy cli/target/gpupool.jar, for each commit)
# Environment: TRACES (default $GPUPOOL_TRACES, else ../shared/traces beside the checkout).
set -euo pipefail
TRACES="$(realpath -m "${TRACES:-${GPUPOOL_TRACES:-$(dirname "${BASH_SOURCE[0]}")/../../../shared/traces}}")"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[ $# -ge 2 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
BEFORE="$(realpath "$1")" AFTER="$(realpath "$2")"; shift 2
REPEATS="${1:-2}"; shift || true
[ $# -gt 0 ] || set -- fcfs fcfs-backfill priority fair-share qssf las srtf-oracle themis gittins \
    fcfs,fcfs-backfill,priority,fair-share,qssf,las,srtf-oracle
PHILLY=$TRACES/philly/philly_jobs.csv
[ -f "$PHILLY" ] || { echo "no $PHILLY: see docs/traces.md (\"Getting the real traces\") and set TRACES" >&2; exit 1; }
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
. "$ROOT/scripts/java-options.sh"
. "$ROOT/scripts/simulate-cache.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# a cache is tied to its jar's path and time: each jar gets a copy of its own, trained here
cp -p "$BEFORE" "$work/before.jar"
cp -p "$AFTER" "$work/after.jar"

args_of() { # policy list -> simulate's arguments
  echo "simulate --trace $PHILLY --trace-format philly --cluster 64x8:V100-32GB --policy $1 --quiet --output json"
  case "$1" in *,*) echo "--threads 2" ;; esac
}

run() { # jar name, policy, output file: one cached run (trains the cache first); prints "wall cpu"
  local jar="$work/$1.jar" kind cache opts t
  # shellcheck disable=SC2046  # word lists
  set -- "$1" "$2" "$3" $(args_of "$2")
  gpupool_simulate_kind "${@:5}"; kind="$gpupool_simulate_k"
  cache="$work/$1-$kind.aot"
  gpupool_java_options simulate; gpupool_simulate_inlining "${@:5}"
  opts="$gpupool_java_opts -XX:+UseSerialGC $gpupool_simulate_jit -Xlog:aot*=off -Xlog:cds*=off"
  if [ ! -f "$cache" ]; then
    local train=""
    case "$kind" in *-fcfs) train=-XX:TieredStopAtLevel=1 ;; esac
    # shellcheck disable=SC2086
    "$JAVA" $opts $train "-XX:AOTCacheOutput=$cache" -jar "$jar" "${@:4}" >/dev/null 2>&1
  fi
  # shellcheck disable=SC2086
  t=$( { /usr/bin/time -f '%e %U %S' "$JAVA" $opts "-XX:AOTCache=$cache" -jar "$jar" "${@:4}" >"$3"; } 2>&1 | tail -1)
  read -r wall user sys <<<"$t"
  echo "$wall $(echo "$user + $sys" | bc)"
}

echo "$(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for p in "$@"; do
  b=() a=()
  for i in $(seq "$REPEATS"); do
    b+=("$(run before "$p" "$work/b.json")")
    a+=("$(run after "$p" "$work/a.json")")
    cmp -s "$work/b.json" "$work/a.json" || { echo "OUTPUT DIFFERS: $p" >&2; exit 1; }
  done
  python3 - "$p" "${b[@]}" -- "${a[@]}" <<'PY'
import statistics, sys
p, rest = sys.argv[1], sys.argv[2:]
cut = rest.index('--')
def fmt(runs):
    pairs = [tuple(map(float, r.split())) for r in runs]
    walls = ' / '.join(f'{w:.2f}' for w, _ in pairs)
    return f'{walls} s (median {statistics.median(w for w, _ in pairs):.2f} s, CPU {statistics.median(c for _, c in pairs):.2f} s)'
print(f'{p}\n  before {fmt(rest[:cut])}\n  after  {fmt(rest[cut + 1:])}')
PY
done
echo "every output identical between the two; load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
