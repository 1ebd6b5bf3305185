# The JVM options every gpupool launcher gives a command (POSIX sh; sourced by ./gpupool in the repository and by
# bin/gpupool in the release bundle, as lib/java-options.sh, so the two run the jar alike).
#
#   gpupool_java_options COMMAND    # sets gpupool_java_opts to the options, separated by spaces, for `gpupool COMMAND ...`
#                                   # (a variable, not output: a command substitution's subshell costs every start ~4 ms)
#
# Protobuf (under OR-Tools) and other libraries still use sun.misc.Unsafe; allowing it keeps JDK 25's deprecation
# warnings off the user's screen. Long-running, latency-bound commands ask G1 for short pauses: the service keeps
# every queued job on the heap, and with G1's default 200 ms target its young pauses were most of the submission
# p99 (docs/benchmarks.md, "Service"); the load generator too, or its own pauses would count as the server's
# latency. A launcher puts $GPUPOOL_JAVA_OPTS after these, so a user's own settings win.
gpupool_java_options() {
  case "${1:-}" in
    server|agent|loadgen) gpupool_java_opts="--sun-misc-unsafe-memory-access=allow -XX:MaxGCPauseMillis=20" ;;
    *) gpupool_java_opts="--sun-misc-unsafe-memory-access=allow" ;;
  esac
}
