package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.batch.BatchPlacer;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.policy.JobQueue;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.engine.reservation.Fence;
import io.gpupool.engine.state.Allocation;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Batch mode's first step of a round: the first admissible pending jobs in policy order go to the placer
 * together; what it picks is bound through the pipeline's own rules and started. The usual walk follows.
 * CPU-only jobs are not batched (the placers solve for GPUs); the usual walk places them.
 */
final class BatchStep {
    private BatchStep() {}

    static void start(PolicyContext ctx, BatchPlacer batchPlacer, PolicyParts policy, PlacementPipeline pipeline, WorkloadProfile profile,
                      RoundJobs jobs, List<String> started) {
        long nowMs = ctx.nowMs();
        JobQueue head = policy.policy().queue(ctx, jobs.pending());
        List<JobState> window = new ArrayList<>();
        for (JobState j; window.size() < batchPlacer.window() && (j = head.poll()) != null; ) {
            if (!j.spec().cpuOnly() && j.holdReason() == null && jobs.quotaReason(j) == null && policy.admission().admit(ctx, j) == null) window.add(j);
        }
        if (window.isEmpty()) return;
        Map<String, Allocation> plan = batchPlacer.plan(new BatchPlacer.Batch(ctx.cluster(), pipeline, profile,
                window.stream().map(JobState::spec).toList()));
        for (JobState j : window) {
            Allocation a = plan.get(j.id());
            if (a == null || jobs.quotaReason(j) != null) continue;
            Fence fence = jobs.fence(j, nowMs);
            PlacementResult r = pipeline.placeGiven(new CycleState(ctx.cluster(), j.spec(), profile, fence.excluded(), fence.only()), a, true);
            if (r.ok()) {
                jobs.start(j, r.allocation(), nowMs);
                started.add(j.id());
            }
        }
    }
}
