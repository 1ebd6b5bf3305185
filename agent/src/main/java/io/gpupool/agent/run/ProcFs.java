package io.gpupool.agent.run;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

/** The few facts about processes the JDK does not give, from Linux's /proc/PID/stat: session ids, live group members. */
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

    /**
     * Whether any process of group {@code pgid} still lives (is not a zombie). A zombie holds no memory and no
     * device; where nothing reaps orphans (a container whose init does not), zombies of a job would otherwise
     * look alive forever.
     */
    static boolean groupHasLiveMember(long pgid) {
        try (var procs = Files.list(Path.of("/proc"))) {
            return procs.anyMatch(p -> {
                String name = p.getFileName().toString();
                if (name.isEmpty() || !Character.isDigit(name.charAt(0))) return false;
                try {
                    String stat = Files.readString(p.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    return Long.parseLong(f[2]) == pgid && !f[0].equals("Z") && !f[0].equals("X");
                } catch (IOException | RuntimeException e) {
                    return false; // ended while we looked
                }
            });
        } catch (IOException e) {
            return false;
        }
    }
}
