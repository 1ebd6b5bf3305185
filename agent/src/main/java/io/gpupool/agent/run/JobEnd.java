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
}
