package io.gpupool.agent.gpu;

import java.util.List;

/**
 * What the agent's jobs hold on the GPUs right now. The fake backend turns it into telemetry, so a demo's
 * dashboard moves with the jobs that run.
 */
@FunctionalInterface
public interface GpuLoad {

    /**
     * One share of one GPU held by a running job's process.
     *
     * @param gpuUuid   the GPU
     * @param pid       the job's process
     * @param milli     compute share in thousandths (1000 = the whole GPU)
     * @param memoryMib memory granted; 0 for a whole GPU (all of it)
     */
    record Use(String gpuUuid, long pid, int milli, long memoryMib) {}

    List<Use> currentUse();

    GpuLoad IDLE = List::of;
}
