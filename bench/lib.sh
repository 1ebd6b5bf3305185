# Shared by the bench scripts that run Maven tests: sourced, not run.

# JDK 25 (JAVA_HOME if it is one, else Temurin's) and Maven's options for it.
bench_use_jdk25() {
  if [ -z "${JAVA_HOME:-}" ] || ! "$JAVA_HOME/bin/java" -version 2>&1 | grep -q '"25'; then
    export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
  fi
  export PATH="$JAVA_HOME/bin:$PATH"
  export MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow ${MAVEN_OPTS:-}"
}

# Two spinning processes keep both cores busy until the script exits (the fault tests' "under stress").
bench_saturate_cores() {
  bench_spinners=()
  for _ in 1 2; do (while :; do :; done) & bench_spinners+=($!); done
  trap 'kill "${bench_spinners[@]}" 2>/dev/null || true' EXIT
}
