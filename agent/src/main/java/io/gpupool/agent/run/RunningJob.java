package io.gpupool.agent.run;

import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.protocol.JobPhase;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * One attempt whose process runs (or is being stopped). The process is the job's wrapper, leader of
 * its own session and process group; {@code exitValue} is present when this agent process started (and reaps) it,
 * and absent when it was re-adopted after an agent restart (then only the pid and its start time tie it to the job).
 */
public final class RunningJob {

    private final JobLaunch launch;
    private final JobDirectory directory;
    private final ProcessHandle handle;
    /** Completes with the wrapper's exit value once this agent process reaped it; null for a re-adopted job. */
    private final CompletableFuture<Integer> exitValue;
    private final long startedAtMs;
    private final boolean ownSession;
    /** Its cgroups; null where the node confines nothing (or it started before the node did). */
    private final io.gpupool.agent.confine.AttemptCgroup cgroup;
    private final CompletableFuture<JobEnd> end = new CompletableFuture<>();

    private JobPhase stopPhase;
    private String stopReason;
    private boolean killed;
    private java.time.Duration grace;

    RunningJob(JobLaunch launch, JobDirectory directory, ProcessHandle handle, CompletableFuture<Integer> exitValue, long startedAtMs, boolean ownSession,
               io.gpupool.agent.confine.AttemptCgroup cgroup) {
        this.cgroup = cgroup;
        this.launch = launch;
        this.directory = directory;
        this.handle = handle;
        this.exitValue = exitValue;
        this.startedAtMs = startedAtMs;
        this.ownSession = ownSession;
    }

    public JobKey key() {
        return launch.key();
    }

    public JobLaunch launch() {
        return launch;
    }

    public JobDirectory directory() {
        return directory;
    }

    public long pid() {
        return handle.pid();
    }

    public long startedAtMs() {
        return startedAtMs;
    }

    /** Whether this agent process started it (false: re-adopted after a restart). */
    public boolean startedByThisAgent() {
        return exitValue != null;
    }

    /** Completes when the process has ended and its end has been recorded. */
    public CompletableFuture<JobEnd> end() {
        return end;
    }

    public synchronized boolean stopping() {
        return stopPhase != null;
    }

    ProcessHandle handle() {
        return handle;
    }

    /** The exit value the reaping gave, if this agent process started the wrapper and it has been reaped. */
    Optional<Integer> reapedExitValue() {
        return exitValue == null ? Optional.empty() : Optional.ofNullable(exitValue.getNow(null));
    }

    boolean ownSession() {
        return ownSession;
    }

    io.gpupool.agent.confine.AttemptCgroup cgroup() {
        return cgroup;
    }

    /** Records the first stop request; false if the job is already being stopped. */
    synchronized boolean requestStop(JobPhase phase, String reason) {
        if (stopPhase != null) return false;
        stopPhase = phase;
        stopReason = reason;
        return true;
    }

    /** SIGKILL came after this grace period. */
    synchronized void markKilled(java.time.Duration after) {
        killed = true;
        grace = after;
    }

    synchronized java.time.Duration killedAfter() {
        return grace;
    }

    synchronized JobPhase stopPhase() {
        return stopPhase;
    }

    synchronized String stopReason() {
        return stopReason;
    }

    synchronized boolean killed() {
        return killed;
    }

    @Override
    public String toString() {
        return key() + "(pid " + pid() + ")";
    }
}
