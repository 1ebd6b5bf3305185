# Start-up caches for short `simulate` replays (POSIX sh; sourced by ./gpupool in the repository, caches under
# cli/target/aot, and by bin/gpupool in the release bundle as lib/simulate-cache.sh, caches under
# ${XDG_CACHE_HOME:-~/.cache}/gpupool/aot).
#
#   gpupool_simulate_cached JAVA JAR CACHE_DIR "$@"   # runs the command and exits when the cache applies;
#                                                     # returns 0 (having done nothing) when it does not
#
# Why: a short replay is dominated by JVM start-up and JIT warm-up, not by the replay. Over the Philly table the
# main thread of fcfs ran ~2 s and C2 compiled ~3 s more beside it, and a policy's own code reached C2 only late
# in the run. A replay of a trace of at most 10 MB or 200,000 synthetic jobs therefore runs with the serial
# collector (one replay thread: G1's concurrent work only competes for the second core) and a JDK 25 AOT cache
# (JEP 483/515: classes loaded and linked, method profiles), one per kind of run: mode, trace format and the
# policies (or the --config file that names them), because one policy's profiles send the JIT the wrong way for
# another. The first run of a kind is the training run (a few seconds more: the JVM assembles the cache when it
# ends). fcfs alone trains C1-only: its profiles keep the JIT to cheap C1 code, half the CPU of a tiered cache.
# Every other kind trains with the tiered JIT, so its next runs compile the policy's hot paths with C2 from the
# start. Measured: docs/benchmarks.md, "Start-up caches for every policy". Longer runs and inflation studies run
# without (the cache does not pay there). A cache older than the jar is retrained; the JVM also refuses a cache
# made for another jar and runs without one. GPUPOOL_AOT=0, or a GC, AOT or JFR option in GPUPOOL_JAVA_OPTS,
# turns the cache off. Names start with gpupool_simulate_ (sourced into the launchers).

# Sets gpupool_simulate_k to the kind of a simulate run (its arguments after `simulate`), as a file name part. The
# functions here set variables rather than print: a command substitution's subshell costs every start a few ms.
gpupool_simulate_kind() {
  gpupool_simulate_format=gpupool; gpupool_simulate_mode=replay
  gpupool_simulate_policies=""; gpupool_simulate_config=""; gpupool_simulate_prev=""
  for a in "$@"; do
    case "$gpupool_simulate_prev" in
      --trace-format) gpupool_simulate_format="$a" ;;
      --mode) gpupool_simulate_mode="$a" ;;
      --policy) gpupool_simulate_policies="$gpupool_simulate_policies,$a" ;;
      --config) gpupool_simulate_config="config-${a##*/}" ;;
    esac
    case "$a" in
      --trace-format=*) gpupool_simulate_format="${a#*=}" ;;
      --mode=*) gpupool_simulate_mode="${a#*=}" ;;
      --policy=*) gpupool_simulate_policies="$gpupool_simulate_policies,${a#*=}" ;;
      --config=*) gpupool_simulate_config="${a#*=}"; gpupool_simulate_config="config-${gpupool_simulate_config##*/}" ;;
      --synthetic|--synthetic=*) gpupool_simulate_format=synthetic ;;
    esac
    gpupool_simulate_prev="$a"
  done
  gpupool_simulate_policies="${gpupool_simulate_policies#,}"
  # the config file's policy applies where --policy names none
  [ -n "$gpupool_simulate_policies" ] || gpupool_simulate_policies="${gpupool_simulate_config:-fcfs}"
  gpupool_simulate_safe "$gpupool_simulate_mode-$gpupool_simulate_format-$gpupool_simulate_policies"
  gpupool_simulate_k="$gpupool_simulate_s"
  # a long list of policies with settings would make a file name too long for some file systems
  if [ "${#gpupool_simulate_k}" -gt 100 ]; then
    gpupool_simulate_k="$gpupool_simulate_mode-$gpupool_simulate_format-$(printf '%s' "$gpupool_simulate_policies" | cksum | cut -d' ' -f1)"
  fi
}

# Sets gpupool_simulate_s to $1 with every character other than A-Z a-z 0-9 _ . - replaced by _ (what
# `tr -c 'A-Za-z0-9_.-' _` does to ASCII, without its processes).
gpupool_simulate_safe() {
  gpupool_simulate_s=""; gpupool_simulate_rest="$1"
  while [ -n "$gpupool_simulate_rest" ]; do
    case "$gpupool_simulate_rest" in
      [A-Za-z0-9_.-]*) gpupool_simulate_s="$gpupool_simulate_s${gpupool_simulate_rest%"${gpupool_simulate_rest#?}"}" ;;
      *) gpupool_simulate_s="${gpupool_simulate_s}_" ;;
    esac
    gpupool_simulate_rest="${gpupool_simulate_rest#?}"
  done
}

# Whether the cache pays for this run (its arguments after `simulate`): a replay of a short trace.
gpupool_simulate_is_short() {
  gpupool_simulate_prev=""
  for a in "$@"; do
    gpupool_simulate_v=""; gpupool_simulate_n=""
    case "$gpupool_simulate_prev" in
      --synthetic) gpupool_simulate_n="${a%%,*}" ;;
      --trace) gpupool_simulate_v="$a" ;;
      --mode) [ "$a" = inflation ] && return 1 ;;
    esac
    case "$a" in
      --synthetic=*) gpupool_simulate_n="${a#*=}"; gpupool_simulate_n="${gpupool_simulate_n%%,*}" ;;
      --trace=*) gpupool_simulate_v="${a#*=}" ;;
      --mode=inflation) return 1 ;;
    esac
    case "$gpupool_simulate_n" in
      ''|*[!0-9]*) ;;
      *) [ "$gpupool_simulate_n" -gt 200000 ] && return 1 ;;
    esac
    if [ -n "$gpupool_simulate_v" ] && [ -f "$gpupool_simulate_v" ] \
       && [ "$(wc -c <"$gpupool_simulate_v" 2>/dev/null || echo 0)" -gt 10000000 ]; then
      return 1
    fi
    gpupool_simulate_prev="$a"
  done
  return 0
}

# How much C2 inlines at hot calls (its default: methods up to 325 bytecodes). Less inlining makes each compile
# cheaper and recompiling after a failed speculation cheaper still; C2 then reaches the replay's hot paths sooner, and
# the code it makes is hardly slower. A run of several policies inlines least: its replays share the cores with the
# compiler, and each policy's types make the shared round code compile again. Measured: docs/benchmarks.md,
# "Smaller compile units". Sets gpupool_simulate_jit.
gpupool_simulate_inlining() {
  gpupool_simulate_prev=""; gpupool_simulate_n=0
  for a in "$@"; do
    case "$gpupool_simulate_prev" in --policy) gpupool_simulate_n=$((gpupool_simulate_n + 1)); case "$a" in *,*) gpupool_simulate_n=2 ;; esac ;; esac
    case "$a" in --policy=*) gpupool_simulate_n=$((gpupool_simulate_n + 1)); case "$a" in *,*) gpupool_simulate_n=2 ;; esac ;; esac
    gpupool_simulate_prev="$a"
  done
  if [ "$gpupool_simulate_n" -gt 1 ]; then gpupool_simulate_jit=-XX:FreqInlineSize=60; else gpupool_simulate_jit=-XX:FreqInlineSize=100; fi
}

gpupool_simulate_cached() {
  gpupool_simulate_java="$1"; gpupool_simulate_jar="$2"; gpupool_simulate_dir="$3"; shift 3
  [ "${1:-}" = simulate ] && [ "${GPUPOOL_AOT:-1}" != 0 ] || return 0
  case " ${GPUPOOL_JAVA_OPTS:-} " in *GC\ *|*GC=*|*AOT*|*SharedArchive*|*Xshare*|*FlightRecord*) return 0 ;; esac
  shift
  gpupool_simulate_is_short "$@" || return 0
  gpupool_simulate_kind "$@"
  gpupool_simulate_cache="$gpupool_simulate_dir/simulate-$gpupool_simulate_k.aot"
  gpupool_simulate_inlining "$@"
  gpupool_java_options simulate
  # The JVM's notes on the cache (a class it skips, a cache it cannot use) go to stderr, or nowhere.
  if [ "$gpupool_simulate_cache" -nt "$gpupool_simulate_jar" ]; then
    # shellcheck disable=SC2046,SC2086  # lists of options
    exec "$gpupool_simulate_java" $gpupool_java_opts -XX:+UseSerialGC $gpupool_simulate_jit "-XX:AOTCache=$gpupool_simulate_cache" \
      -Xlog:aot*=off -Xlog:cds*=off -XX:+DisplayVMOutputToStderr ${GPUPOOL_JAVA_OPTS:-} -jar "$gpupool_simulate_jar" simulate "$@"
  fi
  # No cache (or a place it cannot be written): run without one.
  mkdir -p "$gpupool_simulate_dir" 2>/dev/null && [ -w "$gpupool_simulate_dir" ] || return 0
  gpupool_simulate_train=""
  case "$gpupool_simulate_k" in *-fcfs) gpupool_simulate_train=-XX:TieredStopAtLevel=1 ;; esac
  gpupool_simulate_out="$gpupool_simulate_cache.$$"
  # This run records and, when it ends, assembles the cache (the JVM waits for that: a few seconds). The JVM
  # reports those steps on stderr; they are filtered out, the run's own messages pass. Its exit status goes
  # through a file: POSIX sh has no PIPESTATUS.
  set +e
  # shellcheck disable=SC2046,SC2086  # lists of options
  { { "$gpupool_simulate_java" $gpupool_java_opts -XX:+UseSerialGC $gpupool_simulate_jit $gpupool_simulate_train \
        "-XX:AOTCacheOutput=$gpupool_simulate_out" -Xlog:aot*=off -Xlog:cds*=off -XX:+DisplayVMOutputToStderr \
        ${GPUPOOL_JAVA_OPTS:-} -jar "$gpupool_simulate_jar" simulate "$@" 2>&1 1>&3 3>&-
      echo $? >"$gpupool_simulate_out.rc"; } \
      | grep --line-buffered -Ev '^(Picked up JAVA_TOOL_OPTIONS: .*AOT|Temporary AOTConfiguration recorded: |Launching child process .* to assemble AOT cache|Reading AOTConfiguration |AOTCache creation is complete: |Removed temporary AOT configuration file )' >&2
  } 3>&1
  gpupool_simulate_rc="$(cat "$gpupool_simulate_out.rc" 2>/dev/null || echo 1)"
  rm -f "$gpupool_simulate_out.rc"
  # keep only the cache of a run that worked (a usage error loads little); losing it costs only speed
  if [ "$gpupool_simulate_rc" = 0 ] && [ -s "$gpupool_simulate_out" ]; then
    mv -f "$gpupool_simulate_out" "$gpupool_simulate_cache"
  else
    rm -f "$gpupool_simulate_out" "$gpupool_simulate_out.config"
  fi
  exit "$gpupool_simulate_rc"
}
