package io.gpupool.agent.protocol;

/** Where one attempt of a job stands, as the agent reports it. */
public enum JobPhase {
    /** The process runs (also the phase of a warning about a running job). */
    RUNNING,
    /** The command exited with code 0. */
    SUCCEEDED,
    /** It exited with another code, was killed by a signal the agent did not send, could not start, or was
     *  killed by the agent for exceeding its GPU memory grant; the message says which. */
    FAILED,
    /** The agent stopped it because the server no longer wanted it (cancel, preemption, reassignment). */
    STOPPED,
    /** It ended while the agent was down and left no exit code. */
    LOST,
    /** The agent stopped it at its time limit ({@link JobLaunch#timeLimitMs}): SIGTERM, the grace, then SIGKILL. */
    TIMEOUT;

    public boolean terminal() {
        return this != RUNNING;
    }
}
