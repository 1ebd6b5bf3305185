package io.gpupool.model;

import java.util.OptionalLong;
import java.util.Set;

/**
 * A GPU job as submitted. Times are epoch milliseconds (the simulator's clock starts at 0).
 *
 * @param id                unique job id
 * @param tenant            team the job is charged to
 * @param user              submitting user
 * @param name              job name (used by run-time prediction)
 * @param priority          larger runs first under the priority policy
 * @param submitTimeMs      when the job was submitted
 * @param shape             replicas x GPUs per replica (0 GPUs: a CPU-only job, which must ask for {@code host})
 * @param share             what each GPU must offer (whole or fractional)
 * @param allowedModels     canonical GPU model IDs the job may run on; empty = any
 * @param preemptible       whether a policy may stop the job and requeue it
 * @param requireNvlink     each multi-GPU replica must sit inside one NVLink domain
 * @param runtimeEstimateMs the user's run-time estimate, if given
 * @param host              host CPU and memory each replica needs on its node ({@link HostResources#NONE}:
 *                          not asked for, the default)
 * @param timeLimitMs       how long the job may run before it is stopped and ends as timed out ({@link TimeLimit}),
 *                          if it has a limit; the engine takes it as the upper bound of the job's run time
 */
public record JobSpec(
        String id,
        String tenant,
        String user,
        String name,
        int priority,
        long submitTimeMs,
        GangShape shape,
        GpuShare share,
        Set<String> allowedModels,
        boolean preemptible,
        boolean requireNvlink,
        OptionalLong runtimeEstimateMs,
        HostResources host,
        OptionalLong timeLimitMs) {

    /** A job without a time limit (every caller before time limits existed). */
    public JobSpec(String id, String tenant, String user, String name, int priority, long submitTimeMs, GangShape shape,
                   GpuShare share, Set<String> allowedModels, boolean preemptible, boolean requireNvlink,
                   OptionalLong runtimeEstimateMs, HostResources host) {
        this(id, tenant, user, name, priority, submitTimeMs, shape, share, allowedModels, preemptible, requireNvlink,
                runtimeEstimateMs, host, OptionalLong.empty());
    }

    /** A job that asks for no host resources (every caller before host resources existed). */
    public JobSpec(String id, String tenant, String user, String name, int priority, long submitTimeMs, GangShape shape,
                   GpuShare share, Set<String> allowedModels, boolean preemptible, boolean requireNvlink,
                   OptionalLong runtimeEstimateMs) {
        this(id, tenant, user, name, priority, submitTimeMs, shape, share, allowedModels, preemptible, requireNvlink,
                runtimeEstimateMs, HostResources.NONE);
    }

    public JobSpec {
        if (id == null || id.isBlank()) throw new SpecException("job", "job_id", "must not be empty");
        if (tenant == null || tenant.isBlank()) tenant = "default";
        if (user == null || user.isBlank()) user = tenant;
        if (name == null) name = "";
        if (submitTimeMs < 0) throw new SpecException(where(id), "submit_time", "must be >= 0, got " + submitTimeMs);
        if (shape == null) throw new SpecException(where(id), "num_gpus", "must be set");
        if (share == null) share = GpuShare.WHOLE_GPU;
        if (shape.totalGpus() > 1 && !share.isWhole()) GpuShare.requireOneGpuIfShared(where(id), "gpu_milli", "gpu_mem_mib", share.milli(), share.memoryMib(), shape.totalGpus());
        allowedModels = Set.copyOf(allowedModels);
        if (host == null) host = HostResources.NONE;
        if (shape.totalGpus() == 0) {
            // a CPU-only job (an openb pod with num_gpu 0): it holds host resources on a GPU node, nothing else
            if (!host.requested()) throw new SpecException(where(id), "num_gpus", "a job with no GPUs must ask for host CPU or memory");
            if (!share.isWhole()) throw new SpecException(where(id), "gpu_milli", "a job with no GPUs takes no GPU share");
            if (requireNvlink) throw new SpecException(where(id), "require_nvlink", "a job with no GPUs has no NVLink rule");
        }
        if (runtimeEstimateMs == null) runtimeEstimateMs = OptionalLong.empty();
        if (runtimeEstimateMs.isPresent() && runtimeEstimateMs.getAsLong() <= 0) {
            throw new SpecException(where(id), "runtime_estimate", "must be > 0");
        }
        if (timeLimitMs == null) timeLimitMs = OptionalLong.empty();
        if (timeLimitMs.isPresent() && timeLimitMs.getAsLong() <= 0) throw new SpecException(where(id), "time_limit", "must be > 0");
    }

    /** How a broken rule names the job (made only when one is broken: this runs for every job of a trace). */
    private static String where(String id) {
        return "job " + id;
    }

    /** This job with another time limit (empty: none). */
    public JobSpec withTimeLimitMs(OptionalLong limit) {
        return new JobSpec(id, tenant, user, name, priority, submitTimeMs, shape, share, allowedModels, preemptible,
                requireNvlink, runtimeEstimateMs, host, limit);
    }

    public int totalGpus() {
        return shape.totalGpus();
    }

    /** A job that asks for host CPU and memory only, no GPU (its shape has 0 GPUs per replica). */
    public boolean cpuOnly() {
        return shape.gpusPerReplica() == 0;
    }

    /** GPU demand in thousandths of a GPU (a 0.5-GPU job demands 500). */
    public long gpuMilliDemand() {
        return (long) shape.totalGpus() * share.milli();
    }

    public boolean allows(GpuModel model) {
        return allowedModels.isEmpty() || allowedModels.contains(model.id());
    }

    /** A builder for tests and readers; every field but id and GPU count has a default. */
    public static Builder builder(String id) {
        return new Builder(id);
    }

    public static final class Builder {
        private final String id;
        private String tenant = "default";
        private String user = "";
        private String name = "";
        private int priority;
        private long submitTimeMs;
        private GangShape shape = new GangShape(1, 1);
        private GpuShare share = GpuShare.WHOLE_GPU;
        private Set<String> allowedModels = Set.of();
        private boolean preemptible = true;
        private boolean requireNvlink;
        private OptionalLong estimate = OptionalLong.empty();
        private HostResources host = HostResources.NONE;
        private OptionalLong timeLimit = OptionalLong.empty();

        private Builder(String id) { this.id = id; }

        public Builder tenant(String v) { tenant = v; return this; }
        public Builder user(String v) { user = v; return this; }
        public Builder name(String v) { name = v; return this; }
        public Builder priority(int v) { priority = v; return this; }
        public Builder submitMs(long v) { submitTimeMs = v; return this; }
        public Builder submitSec(long v) { submitTimeMs = v * 1000; return this; }
        public Builder gpus(int n) { shape = GangShape.forGpuCount(n, GangShape.DEFAULT_MAX_GPUS_PER_REPLICA); return this; }
        public Builder shape(int replicas, int perReplica) { shape = new GangShape(replicas, perReplica); return this; }
        public Builder shape(GangShape v) { shape = v; return this; }
        public Builder share(GpuShare v) { share = v; return this; }
        public Builder milli(int milli) { share = new GpuShare(milli, share.memoryMib()); return this; }
        public Builder allowedModels(Set<String> v) { allowedModels = v; return this; }
        public Builder preemptible(boolean v) { preemptible = v; return this; }
        public Builder requireNvlink(boolean v) { requireNvlink = v; return this; }
        public Builder estimateMs(long v) { estimate = OptionalLong.of(v); return this; }
        public Builder estimateSec(long v) { estimate = OptionalLong.of(v * 1000); return this; }
        public Builder host(HostResources v) { host = v; return this; }
        public Builder timeLimitMs(long v) { timeLimit = OptionalLong.of(v); return this; }
        public Builder timeLimitSec(long v) { timeLimit = OptionalLong.of(v * 1000); return this; }
        /** Host CPU (thousandths of a core) and memory (MiB) per replica. */
        public Builder host(long cpuMilli, long memoryMib) { host = new HostResources(cpuMilli, memoryMib); return this; }

        public JobSpec build() {
            return new JobSpec(id, tenant, user, name, priority, submitTimeMs, shape, share, allowedModels,
                    preemptible, requireNvlink, estimate, host, timeLimit);
        }
    }
}
