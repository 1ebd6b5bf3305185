package io.gpupool.agent.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

/** The few facts about a process the JDK does not give: its session id, from Linux's /proc/PID/stat. */
final class ProcFs {

    private ProcFs() {
    }

    /**
     * The session of {@code pid}. Every job runs in its own session (it is started under setsid), and its
     * processes stay in it even when their parent exits and they are re-parented; empty if gone or not Linux.
     */
    static OptionalLong sessionId(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            // "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses, so parse after the last ')'.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return OptionalLong.of(Long.parseLong(f[3]));
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }
}
