package io.gpupool.store;

/**
 * What one GPU grant of one attempt held and used (table usage_grants). Written whole every time.
 *
 * @param user          the job's user field ("" when none)
 * @param gpuModel      the catalog id of the GPU's model
 * @param startedMs     when the server granted it
 * @param endedMs       when the server released it; null while held
 * @param usedGpuMs     GPU-milliseconds of measured utilization charged to this grant
 * @param energyJ       joules of measured power charged to this grant
 * @param meteredUntilMs the time up to which used and energy are measured
 */
public record UsageGrantRow(String jobId, int attempt, String node, int gpu, String tenant, String user, String gpuModel,
                            int milli, long memoryMib, long startedMs, Long endedMs, double usedGpuMs, double energyJ,
                            long meteredUntilMs) {

    /** The key of the row: (job, attempt, node, gpu). */
    public String key() {
        return jobId + "\n" + attempt + "\n" + node + "\n" + gpu;
    }

    public UsageGrantRow withMeter(double used, double energy, long until) {
        return new UsageGrantRow(jobId, attempt, node, gpu, tenant, user, gpuModel, milli, memoryMib, startedMs, endedMs, used, energy, until);
    }

    public UsageGrantRow ended(long at) {
        return new UsageGrantRow(jobId, attempt, node, gpu, tenant, user, gpuModel, milli, memoryMib, startedMs, at, usedGpuMs, energyJ, meteredUntilMs);
    }
}
