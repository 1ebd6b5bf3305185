# Finds a JDK 25 or newer, the one way every gpupool launcher does: sourced (POSIX sh) by ./mvnw and ./gpupool in
# the repository and by bin/gpupool in the release bundle (as lib/find-jdk.sh), so a build and a run pick the same
# JDK or stop with the same line.
#
#   . find-jdk.sh && gpupool_find_jdk || exit 1    # sets and exports JAVA_HOME
#
# Order: $JAVA_HOME when it is JDK 25+; else the newest JDK 25+ among the usual install directories' entries
# ($GPUPOOL_JDK_DIRS, a space-separated list, default below: Debian/Ubuntu/Fedora packages, Temurin's images,
# macOS); else the `java` on PATH when it is 25+. Otherwise it prints one line naming the fix on stderr and
# returns 1. Only POSIX sh: mvnw runs under dash. Names start with gpupool_jdk_ (sourced into other scripts).

GPUPOOL_JDK_REQUIRED=25

# Sets gpupool_jdk_v to the major version of the JDK whose home is $1 (0 when there is none or it cannot tell): its
# release file, else its java. The release file is read by the shell itself: every launcher start runs this, and a
# subshell with sed cost ~10 ms of it.
gpupool_jdk_major_of() {
  gpupool_jdk_v=0
  [ -x "$1/bin/java" ] || return 0
  gpupool_jdk_v=""
  if [ -r "$1/release" ]; then
    while IFS= read -r gpupool_jdk_line || [ -n "$gpupool_jdk_line" ]; do
      case "$gpupool_jdk_line" in
        JAVA_VERSION=\"*) gpupool_jdk_v="${gpupool_jdk_line#JAVA_VERSION=\"}"; gpupool_jdk_v="${gpupool_jdk_v%%\"*}"; break ;;
      esac
    done <"$1/release"
  fi
  if [ -z "$gpupool_jdk_v" ]; then
    gpupool_jdk_v="$("$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.version = //p')"
  fi
  gpupool_jdk_v="${gpupool_jdk_v#1.}"          # 1.8.0_x -> 8.0_x
  gpupool_jdk_v="${gpupool_jdk_v%%[!0-9]*}"    # 25.0.3 -> 25
  gpupool_jdk_v="${gpupool_jdk_v:-0}"
}

# Prints the major version of the JDK whose home is $1, as gpupool_jdk_major_of finds it.
gpupool_jdk_major() {
  gpupool_jdk_major_of "$1"
  echo "$gpupool_jdk_v"
}

gpupool_find_jdk() {
  if [ -n "${JAVA_HOME:-}" ] && gpupool_jdk_major_of "$JAVA_HOME" && [ "$gpupool_jdk_v" -ge "$GPUPOOL_JDK_REQUIRED" ]; then
    export JAVA_HOME
    return 0
  fi
  # the newest JDK 25+ in the install directories (mvnw runs with globbing off: turn it on for this loop only)
  gpupool_jdk_best="" gpupool_jdk_best_major=0
  case $- in *f*) gpupool_jdk_noglob=1; set +f ;; *) gpupool_jdk_noglob=0 ;; esac
  for gpupool_jdk_dir in ${GPUPOOL_JDK_DIRS-/usr/lib/jvm /usr/lib64/jvm /usr/java /opt/java /Library/Java/JavaVirtualMachines}; do
    for gpupool_jdk_home in "$gpupool_jdk_dir"/* "$gpupool_jdk_dir"/*/Contents/Home; do
      [ -x "$gpupool_jdk_home/bin/java" ] || continue
      gpupool_jdk_major_of "$gpupool_jdk_home"; gpupool_jdk_m="$gpupool_jdk_v"
      if [ "$gpupool_jdk_m" -ge "$GPUPOOL_JDK_REQUIRED" ] && [ "$gpupool_jdk_m" -gt "$gpupool_jdk_best_major" ]; then
        gpupool_jdk_best="$gpupool_jdk_home" gpupool_jdk_best_major="$gpupool_jdk_m"
      fi
    done
  done
  [ "$gpupool_jdk_noglob" = 1 ] && set -f
  if [ -n "$gpupool_jdk_best" ]; then
    JAVA_HOME="$gpupool_jdk_best"
    export JAVA_HOME
    return 0
  fi
  # the java on PATH, through its links (/usr/bin/java -> /etc/alternatives/java -> .../bin/java)
  gpupool_jdk_java="$(command -v java 2>/dev/null || true)"
  if [ -n "$gpupool_jdk_java" ]; then
    gpupool_jdk_home="$(dirname "$(dirname "$(readlink -f "$gpupool_jdk_java" 2>/dev/null || echo "$gpupool_jdk_java")")")"
    if gpupool_jdk_major_of "$gpupool_jdk_home" && [ "$gpupool_jdk_v" -ge "$GPUPOOL_JDK_REQUIRED" ]; then
      JAVA_HOME="$gpupool_jdk_home"
      export JAVA_HOME
      return 0
    fi
  fi
  if [ -n "${JAVA_HOME:-}" ]; then
    gpupool_jdk_seen="JAVA_HOME is JDK $(gpupool_jdk_major "$JAVA_HOME" | sed 's/^0$/unknown/') at $JAVA_HOME"
  else
    gpupool_jdk_seen="JAVA_HOME is not set"
  fi
  gpupool_jdk_seen="$gpupool_jdk_seen, none in ${GPUPOOL_JDK_DIRS-/usr/lib/jvm /usr/lib64/jvm /usr/java /opt/java /Library/Java/JavaVirtualMachines}"
  if [ -n "$gpupool_jdk_java" ]; then
    gpupool_jdk_seen="$gpupool_jdk_seen, java on PATH is JDK $(gpupool_jdk_major "$gpupool_jdk_home" | sed 's/^0$/unknown/')"
  else
    gpupool_jdk_seen="$gpupool_jdk_seen, no java on PATH"
  fi
  echo "gpupool needs JDK $GPUPOOL_JDK_REQUIRED or newer: set JAVA_HOME to a JDK $GPUPOOL_JDK_REQUIRED installation ($gpupool_jdk_seen)." >&2
  return 1
}
