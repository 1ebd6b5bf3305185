package io.gpupool.agent.run;

import io.gpupool.agent.protocol.JobPhase;

/**
 * How an attempt ended; written to the job directory (outcome.json) once, which marks it done there.
 *
 * @param phase       a terminal phase
 * @param exitCode    the command's exit code (128 + n for a process killed by signal n); null where unknown
 * @param startedAtMs when the agent started it (epoch ms)
 * @param endedAtMs   when the agent saw it end (epoch ms)
 * @param message     why, in words: "exit code 3", "stopped: not in the server's desired state; exited after SIGTERM"
 */
public record JobEnd(JobPhase phase, Integer exitCode, long startedAtMs, long endedAtMs, String message) {
    public JobEnd {
        if (phase == null || !phase.terminal()) throw new IllegalArgumentException("a job ends in a terminal phase, not " + phase);
    }

    /** The end its exit code tells: 0 succeeded, else failed, naming the signal for 129..159 ({@code suffix} appended). */
    static JobEnd ofExitCode(int code, long startedAtMs, long endedAtMs, String suffix) {
        if (code == 0) return new JobEnd(JobPhase.SUCCEEDED, 0, startedAtMs, endedAtMs, "exit code 0" + suffix);
        String what = code > 128 && code < 160 ? "killed by signal " + (code - 128) + " (exit code " + code + ")" : "exit code " + code;
        return new JobEnd(JobPhase.FAILED, code, startedAtMs, endedAtMs, what + suffix);
    }

    /** The end of an attempt the kernel's OOM killer hit ({@code kills} processes): what it was, not the bare exit code. */
    static JobEnd outOfMemory(long limitMib, long kills, Integer code, long startedAtMs, long endedAtMs, String suffix) {
        return new JobEnd(JobPhase.FAILED, code, startedAtMs, endedAtMs, "killed: out of host memory, limit " + limitMib + " MiB ("
                + kills + " process" + (kills == 1 ? "" : "es") + " killed by the kernel's OOM killer" + (code == null ? "" : "; exit code " + code) + ")" + suffix);
    }
}
