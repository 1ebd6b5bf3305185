#!/usr/bin/env bash
# Load bench of the service over loopback HTTP (docs/benchmarks.md, "Service"):
#   bench/server-load.sh [--db JDBC_URL] [--rate N] [--duration SEC]
# Starts `gpupool server` on a free port with a fresh embedded store (or the given database, which should be
# empty), a static 4x8 A100 pool, no rate limit; runs `gpupool loadgen` against it (open-loop, unique
# Idempotency-Keys, 4 tenants) after a 15 s warm-up at the same rate; prints acknowledged submissions/s and latency percentiles; stops the server.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DB="" RATE=2000 DURATION=30 WARMUP=15
while [ $# -gt 0 ]; do
  case "$1" in
    --db) DB="$2"; shift 2 ;;
    --rate) RATE="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    *) echo "usage: $0 [--db JDBC_URL] [--rate N] [--duration SEC] [--warmup SEC]" >&2; exit 2 ;;
  esac
done
"$ROOT/gpupool" --version >/dev/null   # builds the distribution if needed
DATA="$(mktemp -d /tmp/gpupool-bench.XXXXXX)"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
TOKEN="bench-admin-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
ARGS=(server --host 127.0.0.1 --port "$PORT" --data "$DATA" --cluster 4x8:A100-80GB --rate-limit 0 --admin-token "$TOKEN")
[ -n "$DB" ] && ARGS+=(--db "$DB")
"$ROOT/gpupool" "${ARGS[@]}" > "$DATA/server.log" 2>&1 &
SERVER=$!
# || true: under set -e a failing command in the trap ends it early (wait reports the server's SIGTERM as 143),
# which skipped the clean-up and replaced the bench's exit status
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null || true; rm -rf "$DATA"' EXIT
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
# connections the kernel refused because a listen queue was full (machine-wide): each costs its client a 1 s SYN retry
listen_overflows() { awk '/^TcpExt:/ { if (!n) { split($0, k); n = 1 } else for (i = 2; i <= NF; i++) if (k[i] == "ListenOverflows") print $i }' /proc/net/netstat; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVER/stat"; }   # user + system time of the server, in clock ticks
echo "machine: $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg); store: ${DB:-embedded SQLite in $DATA}"
# 15 s of the same load first, not measured (the JIT compiles the hot paths of server and client, as in any
# long-running server); the server's CPU is counted from the end of the warm-up
STATUS=0
cpu_ticks > "$DATA/cpu-before"
listen_overflows > "$DATA/overflows-before"
"$ROOT/gpupool" loadgen --server "http://127.0.0.1:$PORT" --token "$TOKEN" --rate "$RATE" --duration "$DURATION" --warmup "$WARMUP" \
  | while IFS= read -r line; do echo "$line"; case "$line" in warm-up:*) cpu_ticks > "$DATA/cpu-before" ;; esac; done || STATUS=$?
BEFORE="$(cat "$DATA/cpu-before")"
AFTER="$(cpu_ticks)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "listen-queue overflows (whole machine, warm-up included): $(( $(listen_overflows) - $(cat "$DATA/overflows-before") ))"
# CPU the server spent per submission: what a quiet machine's cores can sustain, whatever else ran meanwhile
awk -v t="$((AFTER - BEFORE))" -v hz="$(getconf CLK_TCK)" -v n="$(awk -v r="$RATE" -v d="$DURATION" 'BEGIN{print int(r*d+0.5)}')" \
  'BEGIN { ms = t * 1000 / hz / n; printf "server CPU: %.3f ms per submission (%.0f submissions/s per core)\n", ms, 1000 / ms }'
exit "$STATUS"
