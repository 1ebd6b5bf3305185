#!/usr/bin/env python3
"""Runs a JVM command and reports its wall time, its CPU time (all threads, from wait4), the CPU time of its main
Java thread and of the C2 compiler threads (polled from /proc/PID/task/*/stat every 50 ms: the last reading before the
exit, so up to 50 ms short), and its peak RSS. On a shared machine the main thread's CPU time follows the replay's
own work; wall time also follows the load.

Usage: bench/sim/thread-times.py OUTFILE java -jar ... (the command's stdout goes to OUTFILE)
"""
import os
import resource
import subprocess
import sys
import time

out, cmd = sys.argv[1], sys.argv[2:]
hz = os.sysconf('SC_CLK_TCK')
start = time.time()
proc = subprocess.Popen(cmd, stdout=open(out, 'w'))
seen = {}   # (tid, name) -> user + sys seconds
while proc.poll() is None:
    try:
        tids = os.listdir(f'/proc/{proc.pid}/task')
    except OSError:
        tids = []
    for tid in tids:
        try:
            stat = open(f'/proc/{proc.pid}/task/{tid}/stat').read()
        except OSError:
            continue
        name = stat[stat.index('(') + 1:stat.rindex(')')]
        fields = stat[stat.rindex(')') + 2:].split()
        seen[(tid, name)] = (int(fields[11]) + int(fields[12])) / hz
    time.sleep(0.05)
wall = time.time() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
# the launcher's thread waits; the Java main thread is the busiest thread still named "java"
main = max((v for (tid, name), v in seen.items() if name == 'java'), default=0)
c2 = sum(v for (tid, name), v in seen.items() if name.startswith('C2'))
print(f"wall {wall:.2f} s, cpu {usage.ru_utime + usage.ru_stime:.2f} s, main thread {main:.2f} s, C2 {c2:.2f} s, "
      f"peak rss {usage.ru_maxrss // 1024} MB, exit {proc.returncode}")
