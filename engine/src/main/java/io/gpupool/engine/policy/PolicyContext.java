package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.TenantLedger;
import io.gpupool.engine.state.ClusterState;

import java.util.Collection;

/** What a policy may look at in one scheduling round. */
public record PolicyContext(
        long nowMs,
        SchedulerConfig config,
        ClusterState cluster,
        TenantLedger ledger,
        RuntimePredictor predictor,
        RuntimeOracle oracle,
        Collection<JobState> running) {

    /** Run time the engine expects of a job: its estimate, else the predictor's guess. */
    public long expectedRuntimeMs(JobState job) {
        return job.predictedRuntimeMs(predictor);
    }
}
