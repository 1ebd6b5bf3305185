package io.gpupool.agent.run;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * How the agent runs jobs.
 *
 * @param workDir             the agent's work directory: job directories (logs, exit codes) and its state file
 * @param killGrace           time between SIGTERM and SIGKILL when a job is stopped
 * @param memoryPolicy        what happens to a job whose processes hold more GPU memory than granted
 * @param memoryAllowanceMib  memory a job may hold beyond its grant before the policy applies: the CUDA
 *                            context and library workspaces, which the driver counts per process but a
 *                            framework's memory fraction does not cover (a few hundred MiB)
 * @param passThroughEnv      variables of the agent's environment that jobs inherit
 * @param unboundAccount      the Unix account of jobs that name none, when the agent is root (null: the agent's own;
 *                            only agents embedded in tests leave it null: {@code gpupool agent} sets nobody)
 * @param allowRootJobs       whether a job may run with uid 0, under any account name
 * @param wrapper             which job wrapper runs the jobs (null: {@link WrapperChoice#AUTO})
 */
public record RunnerConfig(Path workDir, Duration killGrace, MemoryPolicy memoryPolicy, long memoryAllowanceMib,
                           List<String> passThroughEnv, String unboundAccount, boolean allowRootJobs, WrapperChoice wrapper) {

    /** Which program every job runs in ({@link JobWrapper}). */
    public enum WrapperChoice {
        /** The native wrapper where it was built and can be installed, else the shell wrapper (the start message says why). */
        AUTO,
        /** The native wrapper, or the agent does not start. */
        NATIVE,
        /** The shell wrapper (sh, with setpriv to switch accounts). */
        SHELL
    }

    /** What to do when a job exceeds its GPU memory grant. */
    public enum MemoryPolicy {
        /** Report a warning once per job and GPU; the job keeps running. */
        WARN,
        /** Stop the job (SIGTERM, grace, SIGKILL) and report it failed with the reason. */
        KILL
    }

    public static final Duration DEFAULT_KILL_GRACE = Duration.ofSeconds(10);
    public static final long DEFAULT_MEMORY_ALLOWANCE_MIB = 512;

    public RunnerConfig {
        if (workDir == null) throw new IllegalArgumentException("workDir must be set");
        if (killGrace == null || killGrace.isNegative()) killGrace = DEFAULT_KILL_GRACE;
        if (memoryPolicy == null) memoryPolicy = MemoryPolicy.KILL;
        if (memoryAllowanceMib < 0) memoryAllowanceMib = 0;
        passThroughEnv = passThroughEnv == null ? JobEnvironment.DEFAULT_PASS_THROUGH : List.copyOf(passThroughEnv);
        if (wrapper == null) wrapper = WrapperChoice.AUTO;
    }

    /** Defaults: 10 s grace, kill on memory overuse with a 512 MiB allowance. */
    public static RunnerConfig defaults(Path workDir) {
        return new RunnerConfig(workDir, DEFAULT_KILL_GRACE, MemoryPolicy.KILL, DEFAULT_MEMORY_ALLOWANCE_MIB, null, null, false, WrapperChoice.AUTO);
    }

    public RunnerConfig withKillGrace(Duration grace) {
        return new RunnerConfig(workDir, grace, memoryPolicy, memoryAllowanceMib, passThroughEnv, unboundAccount, allowRootJobs, wrapper);
    }

    public RunnerConfig withMemoryPolicy(MemoryPolicy policy) {
        return new RunnerConfig(workDir, killGrace, policy, memoryAllowanceMib, passThroughEnv, unboundAccount, allowRootJobs, wrapper);
    }

    public RunnerConfig withMemoryAllowanceMib(long mib) {
        return new RunnerConfig(workDir, killGrace, memoryPolicy, mib, passThroughEnv, unboundAccount, allowRootJobs, wrapper);
    }

    /** Jobs that name no account run as {@code unbound} (on a root agent); uid 0 only with {@code allowRoot}. */
    public RunnerConfig withAccounts(String unbound, boolean allowRoot) {
        return new RunnerConfig(workDir, killGrace, memoryPolicy, memoryAllowanceMib, passThroughEnv, unbound, allowRoot, wrapper);
    }

    public RunnerConfig withWrapper(WrapperChoice choice) {
        return new RunnerConfig(workDir, killGrace, memoryPolicy, memoryAllowanceMib, passThroughEnv, unboundAccount, allowRootJobs, choice);
    }
}
