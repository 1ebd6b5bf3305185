package io.gpupool.bench;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.model.JobSpec;

import java.util.ArrayDeque;
import java.util.List;

/**
 * A pool held at a steady utilisation with a fixed number of pending jobs: the workload of
 * {@link PlacementBenchmark}, kept apart so that {@link DecisionProfile} times the very same decisions.
 *
 * <p>{@link #decide()} takes the next pending job (round-robin over the pending pool) through the
 * engine's pipeline, filter -> score -> bind. A placed job leaves the pool; a fresh job from the seeded
 * {@link JobStream} takes its slot and is observed by the workload profile, as a submit does; then the
 * oldest allocations are released until utilisation is back at the target. A job that does not fit
 * stays pending and is tried again when the round-robin comes back to it.
 */
public final class SteadyPool {
    public static final int DEFAULT_PENDING = 10_000;
    public static final double DEFAULT_UTILISATION = 0.75;

    private final ClusterState cluster;
    private final PlacementPipeline pipeline;
    private final WorkloadProfile profile = new WorkloadProfile();
    private final JobStream stream;
    private final JobSpec[] pending;
    private final ArrayDeque<List<GpuGrant>> live = new ArrayDeque<>();
    private final long targetMilli;
    private int cursor;
    public long placed;
    public long failed;

    /**
     * @param placement a {@code --placement} value; {@code +} may stand for the comma
     */
    public SteadyPool(int nodes, String placement, int pendingJobs, double utilisation, long seed) {
        this.cluster = new ClusterState(BenchCluster.build(nodes));
        this.pipeline = new PlacementPipeline(PlacementConfig.parse(placement.replace('+', ',')));
        this.stream = new JobStream(seed, "j");
        this.pending = new JobSpec[pendingJobs];
        for (int i = 0; i < pendingJobs; i++) pending[i] = arrive();
        this.targetMilli = (long) (cluster.totalMilli() * utilisation);
        // fill the pool to the target, then churn through the pending pool twice so allocations are well mixed
        long guard = 100L * pendingJobs;
        while (cluster.usedMilli() < targetMilli && guard-- > 0) decide();
        for (int i = 0; i < 2 * pendingJobs; i++) decide();
        if (cluster.usedMilli() < targetMilli * 0.9) {
            throw new IllegalStateException("could not reach the target utilisation: " + cluster.usedMilli() + " of " + cluster.totalMilli());
        }
        placed = 0;
        failed = 0;
    }

    private JobSpec arrive() {
        JobSpec j = stream.next(0);
        profile.observe(j);
        return j;
    }

    /** The job the next {@link #decide()} will try. */
    public JobSpec peek() {
        return pending[cursor];
    }

    /** One placement decision, and after a success the completions that keep utilisation steady. */
    public PlacementResult decide() {
        int i = cursor;
        cursor = i + 1 == pending.length ? 0 : i + 1;
        JobSpec job = pending[i];
        PlacementResult r = pipeline.place(new CycleState(cluster, job, profile, null), true);
        if (r.ok()) {
            placed++;
            live.addLast(r.allocation().grants());
            pending[i] = arrive();
            while (cluster.usedMilli() > targetMilli && !live.isEmpty()) cluster.release(live.pollFirst());
        } else {
            failed++;
        }
        return r;
    }

    public ClusterState cluster() { return cluster; }
    public WorkloadProfile profile() { return profile; }
    public int liveAllocations() { return live.size(); }

    public double utilisation() {
        return cluster.usedMilli() / (double) cluster.totalMilli();
    }
}
