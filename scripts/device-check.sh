#!/usr/bin/env bash
# Runs the node agent's GPU discovery on a real GPU machine and prints what it finds, next to
# nvidia-smi's own view, so the NVML binding (FFM) and the nvidia-smi fallback can be checked against
# the driver. Short and self-contained: nothing is built on the GPU machine.
#
#   scripts/device-check.sh --prepare   on the build machine: builds cli/target/gpupool.jar and a small
#                                       Java runtime (jlink) in target/device-jre, so the GPU machine
#                                       needs neither Maven nor a JDK; prints what to carry there
#   scripts/device-check.sh             on the GPU machine: prints the checks, keeps each one's output in
#                                       target/device-check/, and when $OUT is set (the device tool's output
#                                       folder) copies the transcript and the NVML inventory JSON there
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
JAR="$ROOT/cli/target/gpupool.jar"
JRE="$ROOT/target/device-jre"

if [ "${1:-}" = "--prepare" ]; then
  set -e
  export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
  export PATH="$JAVA_HOME/bin:$PATH"
  MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow ${MAVEN_OPTS:-}" ./mvnw -q -DskipTests -pl cli -am package
  # jdeps also names java.desktop and java.sql: Jackson's optional support for java.beans and java.sql
  # types, unused here. Leaving them out (and stripping libjvm's symbols) keeps the runtime near 40 MB,
  # within what travels to the GPU machine.
  modules=java.base,jdk.management
  rm -rf "$JRE"
  jlink --add-modules "$modules" --strip-debug --no-header-files --no-man-pages --compress=zip-9 --output "$JRE"
  if command -v strip >/dev/null; then strip --strip-unneeded "$JRE/lib/server/libjvm.so"; fi
  "$JRE/bin/java" -jar "$JAR" gpus --fake-gpus 1xT4 --output json >/dev/null
  echo "prepared: $(du -sh "$JAR" | cut -f1) jar, $(du -sh "$JRE" | cut -f1) runtime ($modules)"
  echo "on the GPU machine: carry cli/target/gpupool.jar and target/device-jre, run: bash scripts/device-check.sh"
  exit 0
fi

OUTDIR="$ROOT/target/device-check"
mkdir -p "$OUTDIR"
if [ -x "$JRE/bin/java" ]; then JAVA="$JRE/bin/java"
elif [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA="$JAVA_HOME/bin/java"
else JAVA="$(command -v java || true)"; fi
[ -n "$JAVA" ] || { echo "device-check: no Java runtime; run scripts/device-check.sh --prepare where a JDK 25 is" >&2; exit 2; }
[ -f "$JAR" ] || { echo "device-check: $JAR missing; run scripts/device-check.sh --prepare first" >&2; exit 2; }
gpupool() { "$JAVA" -jar "$JAR" "$@"; }

section() { printf '\n===== %s =====\n' "$1"; }
# Runs a check, shows its output and keeps it in $OUTDIR/$1; a failing check does not stop the others.
check() {
  local name="$1"; shift
  section "$name: $*"
  local t0 t1
  t0=$(date +%s%N)
  "$@" >"$OUTDIR/$name" 2>&1
  local rc=$?
  t1=$(date +%s%N)
  cat "$OUTDIR/$name"
  echo "[exit $rc, $(( (t1 - t0) / 1000000 )) ms]"
}

main() {
section "machine"
uname -a; nproc; "$JAVA" -version 2>&1 | head -1
ldconfig -p 2>/dev/null | grep -m3 libnvidia-ml || echo "libnvidia-ml not in the linker cache"

check nvidia-smi.txt nvidia-smi
check smi-query.csv nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.used,memory.free,utilization.gpu,temperature.gpu,power.draw,driver_version --format=csv,noheader,nounits
check smi-apps.csv nvidia-smi --query-compute-apps=gpu_uuid,pid,used_memory --format=csv,noheader,nounits
check smi-topo.txt nvidia-smi topo -m
check gpus-nvml.txt gpupool gpus --backend nvml
check gpus-nvml.json gpupool gpus --backend nvml --output json
check gpus-smi.txt gpupool gpus --backend nvidia-smi
check gpus-auto.txt gpupool gpus

# With PyTorch on the machine: a process holding GPU memory must show up with that memory (what the
# agent's memory guard reads); torch reserves in its caching allocator and NVML counts the context too.
if command -v python3 >/dev/null && timeout 60 python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  python3 -c "import torch,time; x=torch.empty(1024**3, dtype=torch.uint8, device='cuda'); print('holding 1 GiB', flush=True); time.sleep(20)" &
  holder=$!
  sleep 8
  check gpus-with-process.txt gpupool gpus --backend nvml
  kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
else
  section "no PyTorch with CUDA here: per-process memory not exercised"
fi
}

main 2>&1 | tee "$OUTDIR/device-check.log"
echo
echo "device-check: outputs in $OUTDIR"
if [ -n "${OUT:-}" ]; then cp "$OUTDIR/device-check.log" "$OUTDIR/gpus-nvml.json" "$OUT"/ 2>/dev/null; fi
