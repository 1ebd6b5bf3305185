package io.gpupool.agent.protocol;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.gpupool.model.HostResources;
import io.gpupool.model.SpecException;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Everything needed to start one attempt of a job on this node: what the server's desired state lists.
 *
 * @param jobId   the job
 * @param attempt the attempt (see {@link JobKey})
 * @param command program and arguments; run directly, not through a shell (give {@code sh -c '...'} for one)
 * @param env     extra environment variables; the GPU variables the agent sets win over these
 * @param workDir working directory; null = the job's own directory under the agent's work directory
 * @param gpus    the granted GPUs, in the order CUDA should number them (device 0 first)
 * @param host    the host CPU and RAM the job asked for per replica (its cgroup's cpu and memory limits); null (or
 *                nothing asked): no CPU or memory limit for this job, only the node's device and pids limits
 * @param runAs   the Unix account the command runs as; null = the agent's account for jobs without one
 *                (its unbound account when the agent is root)
 * @param timeLimitMs how long the attempt may run, from its start on the node; at the limit the agent stops it (SIGTERM,
 *                the grace, SIGKILL) and reports TIMEOUT. Null = no limit. Kept in the job directory's launch record, so
 *                a restarted agent still enforces it
 * @param submittedMs the job's submit instant on the server (epoch ms): with the id it names the job, so an attempt
 *                directory of an earlier job that had the same id (before the server's store was restored from a
 *                backup) is not taken for this one's ({@link JobKey}). Null from a server, and in the launch records of an
 *                agent, of a release before the instant was sent
 */
public record JobLaunch(String jobId, int attempt, List<String> command, Map<String, String> env, String workDir,
                        List<GrantedGpu> gpus, @JsonInclude(JsonInclude.Include.NON_NULL) HostResources host, String runAs,
                        @JsonInclude(JsonInclude.Include.NON_NULL) Long timeLimitMs,
                        @JsonInclude(JsonInclude.Include.NON_NULL) Long submittedMs) {

    public JobLaunch {
        JobKey key = new JobKey(jobId, attempt, submittedMs); // validates id, attempt and submit instant
        String where = "job " + key;
        if (command == null || command.isEmpty() || command.getFirst() == null || command.getFirst().isBlank()) {
            throw new SpecException(where, "command", "must name a program to run");
        }
        command = List.copyOf(command);
        env = env == null ? Map.of() : Map.copyOf(env);
        gpus = gpus == null ? List.of() : List.copyOf(gpus);
        if (host != null && !host.requested()) host = null;
        Set<String> seen = new HashSet<>();
        for (GrantedGpu g : gpus) {
            if (!seen.add(g.uuid())) throw new SpecException(where, "gpus", "GPU " + g.uuid() + " is granted twice");
        }
        if (runAs != null && (runAs.isEmpty() || runAs.length() > 64 || !runAs.chars().allMatch(c -> c > 0x20 && c < 0x7f && c != ':' && c != '/'))) {
            throw new SpecException(where, "run_as", "'" + runAs + "' is not a Unix account name");
        }
        if (timeLimitMs != null && timeLimitMs <= 0) throw new SpecException(where, "time_limit_ms", "must be > 0, got " + timeLimitMs);
        for (String name : env.keySet()) {
            if (name.isEmpty() || name.contains("=") || name.indexOf('\0') >= 0) {
                throw new SpecException(where, "env", "'" + name + "' is not a valid variable name");
            }
        }
    }

    /** A launch of a job whose submit instant is not given (tests; see {@link JobKey}). */
    public JobLaunch(String jobId, int attempt, List<String> command, Map<String, String> env, String workDir,
                     List<GrantedGpu> gpus, HostResources host, String runAs, Long timeLimitMs) {
        this(jobId, attempt, command, env, workDir, gpus, host, runAs, timeLimitMs, null);
    }

    /** A launch without a time limit. */
    public JobLaunch(String jobId, int attempt, List<String> command, Map<String, String> env, String workDir,
                     List<GrantedGpu> gpus, HostResources host, String runAs) {
        this(jobId, attempt, command, env, workDir, gpus, host, runAs, null, null);
    }

    /** A launch without host resources (no CPU or memory limit) and without an account of its own. */
    public JobLaunch(String jobId, int attempt, List<String> command, Map<String, String> env, String workDir, List<GrantedGpu> gpus) {
        this(jobId, attempt, command, env, workDir, gpus, null, null, null, null);
    }

    public JobKey key() {
        return new JobKey(jobId, attempt, submittedMs);
    }

    /** The same launch for a job submitted at {@code ms}. */
    public JobLaunch withSubmittedMs(Long ms) {
        return new JobLaunch(jobId, attempt, command, env, workDir, gpus, host, runAs, timeLimitMs, ms);
    }
}
