# gpupool fence keeper. $1: the agent's work directory; started by the agent under setsid, so it outlives the
# agent. The agent renews "$1/lease" ("DEADLINE GRACE", centiseconds; DEADLINE on the clock of /proc/uptime)
# with every report the server applies. When DEADLINE passes without a renewal (the agent is dead, paused or
# cut off) the keeper stops every job that still runs: SIGTERM to its process group, SIGKILL after GRACE. So a
# job never outlives its node's lease by more than the grace, whatever happened to the agent, and the server,
# which waits for the lease, the grace and a margin before it runs the job elsewhere, never runs it twice at
# once (docs/architecture.md, "At most once"). Only shell builtins besides sleep and grep: while the
# agent renews, it wakes once per lease. It ends when the lease has run out and no job runs any more, or when
# the work directory is gone.
w=$1
while :; do
  read deadline grace 2>/dev/null < "$w/lease" || exit 0
  read up idle < /proc/uptime
  now=${up%.*}${up#*.}
  left=$((deadline - now))
  if [ "$left" -gt 0 ]; then
    sleep $((left / 100)).$((left % 100 / 10))$((left % 10))
    continue
  fi
  stopped=
  for d in "$w"/jobs/*; do
    [ -f "$d/pid" ] && [ ! -e "$d/exit" ] && [ ! -e "$d/outcome.json" ] || continue
    read pid 2>/dev/null < "$d/pid" || continue
    # only our wrapper for this very directory: a pid is reused once its process is gone
    grep -qzxF -- "$d" "/proc/$pid/cmdline" 2>/dev/null || continue
    [ -e "$d/fenced" ] || echo "$now" > "$d/fenced"
    kill -TERM "-$pid" 2>/dev/null && stopped="$stopped $pid"
  done
  [ -n "$stopped" ] || exit 0
  sleep $((grace / 100)).$((grace % 100 / 10))$((grace % 10))
  for pid in $stopped; do kill -KILL "-$pid" 2>/dev/null; done
  # a fenced job's processes outside its process group (a daemon in a session of its own) are still in its cgroup:
  # cgroup.kill (v2, kernel 5.14+) ends them too; the agent removes the group when it sees the end
  for d in "$w"/jobs/*; do
    [ -e "$d/fenced" ] && [ -f "$d/cgroups" ] && [ ! -e "$d/outcome.json" ] || continue
    while read h c g; do [ -e "$g/cgroup.kill" ] && echo 1 > "$g/cgroup.kill"; done < "$d/cgroups"
  done
done
