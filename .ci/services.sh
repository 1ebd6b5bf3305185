#!/usr/bin/env bash
# Services the server module's tests need (sourced by .ci/run; usable by hand: `source .ci/services.sh`):
#   - a throwaway PostgreSQL cluster in a temp dir on a free loopback port -> GPUPOOL_TEST_PG_URL
#     (dist's InstallDocTest starts a cluster of its own from the same binaries, /usr/lib/postgresql/N/bin)
#   - Chromium and chromedriver from Debian's packages                   -> GPUPOOL_TEST_CHROMIUM, GPUPOOL_TEST_CHROMEDRIVER
#   - gcc and libc6-dev (the agent's build compiles its native job wrapper, statically linked; its NVML test
#     compiles a stand-in libnvidia-ml), musl-tools (the wrapper is built with musl where it is installed: it starts
#     with a third of the page faults of a static glibc program)
#   - sqlite3, curl, openssl, systemd-analyze (dist's tests run docs/install.md and verify the systemd units)
# Missing packages are installed with apt-get. The cluster is stopped and removed when the shell exits.
# In CI (GPUPOOL_CI=1) the tests that need these fail instead of skipping when they are absent.

gpupool_services_install() {
  local missing=()
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
  command -v gcc >/dev/null 2>&1 || missing+=(gcc)   # the native job wrapper; the NVML binding test's stand-in library
  [ -n "$(ls /usr/lib/*/libc.a /usr/lib/libc.a 2>/dev/null)" ] || missing+=(libc6-dev)   # the wrapper is linked statically
  command -v musl-gcc >/dev/null 2>&1 || missing+=(musl-tools)   # ... with musl where it can: a cheaper job start
  # dist's InstallDocTest runs docs/install.md: TLS (openssl), the API (curl), a backup and a restore of the store (sqlite3)
  command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)   # dist's BundleContentsTest verifies the units
  if [ ${#missing[@]} -gt 0 ]; then
    echo "services: installing ${missing[*]}" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

gpupool_services_start_postgres() {
  local bin port dir user=postgres
  bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
  [ -x "$bin/initdb" ] || { echo "services: PostgreSQL binaries not found" >&2; return 1; }
  # a free port: ask the kernel for one
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  dir="$(mktemp -d /tmp/gpupool-pg.XXXXXX)"
  # initdb refuses to run as root; the binaries may be present without the packages' postgres user
  if [ "$(id -u)" = 0 ] && ! id "$user" >/dev/null 2>&1; then useradd --system --no-create-home "$user"; fi
  if [ "$(id -u)" = 0 ]; then chown "$user" "$dir"; run_pg() { runuser -u "$user" -- "$@"; }; else run_pg() { "$@"; }; fi
  run_pg "$bin/initdb" -D "$dir/data" -U gpupool --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; return 1; }
  run_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=128MB" start >/dev/null \
    || { cat "$dir/server.log" >&2; return 1; }
  run_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U gpupool gpupool
  export GPUPOOL_TEST_PG_URL="jdbc:postgresql://127.0.0.1:$port/gpupool?user=gpupool"
  GPUPOOL_PG_DIR="$dir"
  GPUPOOL_PG_BIN="$bin"
  trap 'gpupool_services_stop' EXIT
  echo "services: PostgreSQL on 127.0.0.1:$port ($dir)" >&2
}

gpupool_services_stop() {
  if [ -n "${GPUPOOL_PG_DIR:-}" ] && [ -d "$GPUPOOL_PG_DIR/data" ]; then
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$GPUPOOL_PG_BIN/pg_ctl" -D "$GPUPOOL_PG_DIR/data" -m immediate stop >/dev/null 2>&1
    else "$GPUPOOL_PG_BIN/pg_ctl" -D "$GPUPOOL_PG_DIR/data" -m immediate stop >/dev/null 2>&1; fi
    rm -rf "$GPUPOOL_PG_DIR"
  fi
}

gpupool_services() {
  gpupool_services_install
  gpupool_services_start_postgres
  export GPUPOOL_TEST_CHROMIUM="$(command -v chromium)"
  export GPUPOOL_TEST_CHROMEDRIVER="$(command -v chromedriver)"
}
