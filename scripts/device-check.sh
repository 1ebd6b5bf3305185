#!/usr/bin/env bash
# A GPU server's acceptance check for gpupool: the node agent's GPU discovery (NVML through FFM, and the
# nvidia-smi fallback) beside nvidia-smi's own view, then a server and an agent on the machine running jobs on
# the real GPU as an ordinary account (device filter, memory guard, telemetry). Ends with a verdict, one PASS or
# FAIL line per property, and exits with the number of failures. Nothing is built on the GPU machine.
#
#   scripts/device-check.sh --prepare   on the build machine: builds the jar and packs target/device-kit.tar.xz
#                                       (a trimmed jar and a jlink runtime, 35 MB), so the GPU machine needs
#                                       neither Maven nor a JDK
#   scripts/device-check.sh             on the GPU machine (root, for the job account and cgroups): runs the
#                                       checks, keeps each one's output in target/device-check/, and when $OUT is
#                                       set (the device tool's output folder) copies the transcript there
#   DEVICE_CHECK_FAKE=1 scripts/device-check.sh   rehearses the end-to-end part with a fake GPU
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"
JAR="$ROOT/cli/target/gpupool.jar"

KIT="$ROOT/target/device-kit.tar.xz"

if [ "${1:-}" = "--prepare" ]; then
  set -e
  export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
  export PATH="$JAVA_HOME/bin:$PATH"
  MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow ${MAVEN_OPTS:-}" ./mvnw -q -o -DskipTests -pl cli -am package
  # The whole jar (137 MB) and a runtime do not fit the 64 MiB that travels to the GPU machine. The kit keeps
  # what the server, the agent and the client use on Linux x86-64: it leaves out the CP-SAT and XGBoost
  # natives (optimize, the gbt predictor), the Kubernetes client and other platforms' natives.
  rm -rf "$ROOT/target/device-kit" "$KIT"
  mkdir -p "$ROOT/target/device-kit"
  cp "$JAR" "$ROOT/target/device-kit/gpupool.jar"
  (cd "$ROOT/target/device-kit" && zip -q -d gpupool.jar 'ortools-*' 'lib/*' 'org/bouncycastle/pqc/*' \
      'org/sqlite/native/FreeBSD/*' 'org/sqlite/native/Mac/*' 'org/sqlite/native/Windows/*' 'org/sqlite/native/Linux-Musl/*' \
      'org/sqlite/native/Linux/[!x]*' 'org/sqlite/native/Linux/x86/*' \
      'com/sun/jna/[!lp]*' 'com/sun/jna/linux-[!x]*' 'com/sun/jna/linux-x86/*')
  # Stored (not deflated) entries and an uncompressed runtime image: xz over the whole kit then compresses
  # far better than the entries' own zip. libjvm stripped of its symbols.
  (cd "$ROOT/target/device-kit" && mkdir x && cd x && unzip -q ../gpupool.jar && rm ../gpupool.jar && zip -q -0 -r ../gpupool.jar . && cd .. && rm -rf x)
  modules=java.base,java.sql,java.naming,java.management,jdk.management,java.net.http,jdk.unsupported,java.logging,java.xml,jdk.zipfs
  jlink --add-modules "$modules" --strip-debug --no-header-files --no-man-pages --output "$ROOT/target/device-kit/jre"
  if command -v strip >/dev/null; then strip --strip-unneeded "$ROOT/target/device-kit/jre/lib/server/libjvm.so"; fi
  "$ROOT/target/device-kit/jre/bin/java" -jar "$ROOT/target/device-kit/gpupool.jar" gpus --fake-gpus 1xT4 --output json >/dev/null
  tar -C "$ROOT/target" -cf - device-kit | xz -T2 -6 >"$KIT"
  echo "prepared: $KIT, $(du -sh "$KIT" | cut -f1) ($(du -sh "$ROOT/target/device-kit" | cut -f1) unpacked)"
  echo "on the GPU machine: carry target/device-kit.tar.xz, run: bash scripts/device-check.sh"
  exit 0
fi

OUTDIR="$ROOT/target/device-check"
mkdir -p "$OUTDIR"
KITDIR="$ROOT/target/device-kit"
if [ ! -x "$KITDIR/jre/bin/java" ] && [ -f "$KIT" ]; then xz -dc "$KIT" | tar -C "$ROOT/target" -xf -; fi
if [ -x "$KITDIR/jre/bin/java" ]; then JAVA="$KITDIR/jre/bin/java"; JAR="$KITDIR/gpupool.jar"
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
if [ "$TORCH" = 1 ]; then
  python3 -c "import torch,time; x=torch.empty(1024**3, dtype=torch.uint8, device='cuda'); print('holding 1 GiB', flush=True); time.sleep(20)" &
  holder=$!
  sleep 8
  check gpus-with-process.txt gpupool gpus --backend nvml
  kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
else
  section "no PyTorch with CUDA here: per-process memory not exercised"
fi
e2e
}

# A server (SQLite) and an agent on this machine, with the real GPU through NVML, running jobs as an ordinary
# Unix account: a whole-GPU job sees its GPU and shows in the node's telemetry; a fractional job that holds
# more GPU memory than granted is stopped by the memory guard, one within its grant is not; CUDA works inside
# the job's device filter (its GPU, nvidiactl, nvidia-uvm). DEVICE_CHECK_FAKE=1 rehearses the plumbing without
# a GPU.
e2e() {
  local dir=/tmp/gpupool-e2e admin=device-check-admin-token-0001 port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  local py; py="$(command -v python3 || true)"
  local agentgpus=(--backend nvml)
  if [ -n "${DEVICE_CHECK_FAKE:-}" ]; then agentgpus=(--fake-gpus 1xH200 --fake-device-dir "$dir/dev"); fi
  rm -rf "$dir"; mkdir -p "$dir"; chmod 755 "$dir"
  export GPUPOOL_SERVER="http://127.0.0.1:$port" GPUPOOL_TOKEN="$admin"
  section "e2e: server and agent (${agentgpus[*]})"
  "$JAVA" -jar "$JAR" server --data "$dir/data" --host 127.0.0.1 --port "$port" --admin-token "$admin" --policy fcfs >"$dir/server.log" 2>&1 &
  local server=$!
  for _ in $(seq 1 60); do curl -fsS "$GPUPOOL_SERVER/readyz" >/dev/null 2>&1 && break; sleep 0.5; done
  local join; join=$(curl -fsS -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
      -X POST "$GPUPOOL_SERVER/api/v1/agent-tokens" -d '{"label":"device"}' | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
  id gpujob >/dev/null 2>&1 || useradd --create-home gpujob
  curl -fsS -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' -X POST "$GPUPOOL_SERVER/api/v1/tenants" \
      -d '{"name":"lab","weight":1}' >/dev/null
  local member; member=$(gpupool token lab --label device --unix-user gpujob | grep -o 'gp_[A-Za-z0-9_-]*' | head -1)
  "$JAVA" -jar "$JAR" agent --server "$GPUPOOL_SERVER" --token "$join" --node-name gpu1 --work-dir "$dir/agent" \
      "${agentgpus[@]}" --memory-policy kill --kill-grace 3 >"$dir/agent.log" 2>&1 &
  local agent=$!
  for _ in $(seq 1 60); do gpupool nodes 2>/dev/null | grep -q gpu1 && break; sleep 0.5; done
  check e2e-nodes.txt gpupool nodes
  sed -n 1,15p "$dir/agent.log"

  local probe="import os,sys; print('uid', os.getuid(), 'CUDA_VISIBLE_DEVICES', os.environ.get('CUDA_VISIBLE_DEVICES'), flush=True)"
  if [ "$TORCH" = 1 ]; then
    cat >"$dir/whole.py" <<PY
$probe
import torch, time
print('devices', torch.cuda.device_count(), torch.cuda.get_device_name(0), flush=True)
a = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16); hold = torch.empty(4 * 1024**3, dtype=torch.uint8, device='cuda')
t = time.time()
while time.time() - t < 12: a @ a
torch.cuda.synchronize(); print('matmul loop done', flush=True)
PY
    cat >"$dir/over.py" <<PY
$probe
import torch, time
x = torch.empty(2 * 1024**3, dtype=torch.uint8, device='cuda'); print('holding 2 GiB', flush=True); time.sleep(4)
y = torch.empty(20 * 1024**3, dtype=torch.uint8, device='cuda'); print('holding 22 GiB', flush=True); time.sleep(60)
print('not stopped', flush=True)
PY
    cat >"$dir/within.py" <<PY
$probe
import torch, time
x = torch.empty(4 * 1024**3, dtype=torch.uint8, device='cuda'); print('holding 4 GiB', flush=True); time.sleep(15); print('done', flush=True)
PY
    local run=("$py")
  else
    for f in whole over within; do
      printf '%s\n' "$probe" "import os" "try:" "    os.close(os.open('/dev/nvidia0', os.O_RDWR)); print('opened /dev/nvidia0')" \
          "except OSError as e: print('cannot open /dev/nvidia0:', e)" >"$dir/$f.py"
    done
    local run=(python3)
  fi
  chmod 644 "$dir"/*.py
  export GPUPOOL_TOKEN="$member"
  submit_all() {
    gpupool submit --gpus 1 --name whole -- "${run[@]}" "$dir/whole.py" &&
    gpupool submit --gpus 1 --milli 500 --mem 8192 --name over -- "${run[@]}" "$dir/over.py" &&
    gpupool submit --gpus 1 --milli 250 --mem 16384 --name within -- "${run[@]}" "$dir/within.py"
  }
  check e2e-submit.txt submit_all
  # the node's table and the pool's GPU telemetry (NVML's memory in use and utilization) while the jobs run
  busy() {
    for _ in 1 2 3 4; do
      sleep 5; gpupool nodes
      curl -fsS -H "Authorization: Bearer $admin" "$GPUPOOL_SERVER/api/v1/pool" | grep -o '"telemetry":{[^}]*}'
    done
  }
  check e2e-nodes-busy.txt busy
  for j in j1 j2 j3; do
    check "e2e-$j.log" timeout 150 "$JAVA" -jar "$JAR" logs --follow "$j"
    check "e2e-$j.status" gpupool status "$j"
  done
  GPUPOOL_TOKEN="$admin" check e2e-usage.txt gpupool usage
  kill "$agent" "$server" 2>/dev/null; wait "$agent" "$server" 2>/dev/null
  section "e2e: agent log"; cat "$dir/agent.log"
  section "e2e: server log (last 40 lines)"; tail -40 "$dir/server.log"
}

# The verdict: what a GPU server must show for gpupool to run jobs on it as designed. Each line PASS or FAIL;
# the script's exit code is the number of failures. Without a GPU (DEVICE_CHECK_FAKE=1) only what a fake node
# can show is judged.
verdict() {
  python3 - "$OUTDIR" "${DEVICE_CHECK_FAKE:-}" "$TORCH" <<'PY'
import json, os, re, sys
out, fake, torch = sys.argv[1], bool(sys.argv[2]), sys.argv[3] == "1"
def read(name):
    try:
        return open(os.path.join(out, name)).read()
    except OSError:
        return ""
failed = 0
def judge(ok, what):
    global failed
    print(("PASS  " if ok else "FAIL  ") + what)
    failed += 0 if ok else 1
if not fake:
    smi = [[f.strip() for f in l.split(",")] for l in read("smi-query.csv").splitlines() if l.strip()]
    try:
        nvml = json.loads(read("gpus-nvml.json"))
    except ValueError:
        nvml = {"inventory": {"gpus": []}, "telemetry": []}
    smi_gpus = {r[1]: (int(r[3]), int(r[4])) for r in smi if len(r) > 4}
    nvml_gpus = {g["uuid"]: g["memory_total_mib"] for g in nvml["inventory"]["gpus"]}
    judge(smi_gpus and set(smi_gpus) == set(nvml_gpus), f"NVML finds the GPUs nvidia-smi lists ({len(nvml_gpus)} of {len(smi_gpus)})")
    judge(all(nvml_gpus.get(u) == t for u, (t, _) in smi_gpus.items()), "NVML and nvidia-smi agree on each GPU's memory")
    used = {t["uuid"]: t["memory_used_mib"] for t in nvml["telemetry"]}
    judge(all(used.get(u) is not None and abs(used[u] - m) <= 64 for u, (_, m) in smi_gpus.items()),
          "NVML's memory in use is nvidia-smi's, within 64 MiB (driver-reserved memory not counted)")
    if torch:
        held = [int(m) for m in re.findall(r"\b\d+:(\d+)MiB", read("gpus-with-process.txt"))]
        judge(any(m >= 1024 for m in held), f"a process holding 1 GiB shows with at least that (seen: {held} MiB)")
logs = {j: read(f"e2e-{j}.log") for j in ("j1", "j2", "j3")}
status = {j: read(f"e2e-{j}.status") for j in ("j1", "j2", "j3")}
uids = [int(u) for l in logs.values() for u in re.findall(r"^uid (\d+)", l, re.M)]
judge(len(uids) == 3 and all(u != 0 for u in uids), f"jobs run as an ordinary account, not root (uids {uids})")
judge(all(re.search(r"CUDA_VISIBLE_DEVICES GPU-", l) for l in logs.values()), "each job's CUDA_VISIBLE_DEVICES names its GPU")
judge(" SUCCEEDED " in status["j1"], "the whole-GPU job succeeded")
judge(" SUCCEEDED " in status["j3"], "the 25% / 16 GiB job holding 4 GiB ran to its end")
if not fake and torch:
    judge("devices 1" in logs["j1"] and "matmul loop done" in logs["j1"], "CUDA ran inside the job's device filter")
    judge(" FAILED " in status["j2"] and "exceeded its GPU memory grant" in status["j2"],
          "the memory guard stopped the 50% / 8 GiB job that took 22 GiB")
    utils = [float(u) for u in re.findall(r'"utilPercent":([0-9.]+)', read("e2e-nodes-busy.txt"))]
    judge(any(u > 0 for u in utils), f"the pool's telemetry showed the GPU busy while the matmul job ran ({utils})")
print(f"device-check: {failed} check(s) failed")
sys.exit(failed)
PY
}

TORCH=0
if [ -z "${DEVICE_CHECK_FAKE:-}" ] && command -v python3 >/dev/null && timeout 60 python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then TORCH=1; fi
main 2>&1 | tee "$OUTDIR/device-check.log"
echo
verdict | tee "$OUTDIR/verdict.txt"
rc=${PIPESTATUS[0]}
echo "device-check: outputs in $OUTDIR"
if [ -n "${OUT:-}" ]; then cp "$OUTDIR/device-check.log" "$OUTDIR/gpus-nvml.json" "$OUTDIR/verdict.txt" "$OUT"/ 2>/dev/null; fi
exit "$rc"
