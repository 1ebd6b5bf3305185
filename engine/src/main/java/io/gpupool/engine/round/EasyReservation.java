package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.PlacementResult;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.engine.reservation.Fence;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.JobSpec;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A reservation of GPUs for a blocked job from {@code atMs} (EASY backfill): the earliest time the job fits if
 * running jobs end as expected, and the GPUs it would take. Jobs behind it start only if they end before it or fit
 * on other GPUs.
 */
record EasyReservation(String jobId, long atMs, Set<Long> gpus) {

    /**
     * The reservation for a job that does not fit now, or null when it would not fit even with every running job
     * gone (outside the GPUs its {@code fence} keeps it off). Running jobs are released in order of expected end, and the job is placed again only when a released
     * job leaves a node that could now hold one of its replicas; the cluster is left as it was.
     */
    static EasyReservation reserve(PolicyContext ctx, JobState job, Fence fence, Collection<JobState> running, RunningTerms terms, PlacementPipeline pipeline,
                                   WorkloadProfile profile, ReservationMemo memo) {
        boolean memoizable = pipeline.dependsOnlyOnClusterState();
        if (memoizable) {
            ReservationMemo.Reuse known = memo.reuse(ctx, job);
            if (known != null) return known.reservation();
        }
        ClusterState cluster = ctx.cluster();
        long version = cluster.version();
        ExpectedEnds ends = new ExpectedEnds(running, terms, ctx);
        ReplicaDemand demand = ReplicaDemand.of(job.spec());
        int mark = cluster.checkpoint();
        try {
            while (!ends.isEmpty()) {
                Allocation freed = ends.next().allocation();
                cluster.release(freed);
                if (!anyCouldHoldReplica(cluster, freed.grants(), job.spec(), demand)) continue;
                PlacementResult p = pipeline.place(new CycleState(cluster, job.spec(), profile, fence.excluded(), fence.only()), false);
                if (p.ok()) {
                    List<GpuGrant> grants = p.allocation().grants();
                    Set<Long> gpus = memoizable ? memo.sameGpus(grants) : null;   // most often the last reservation's
                    if (gpus == null) {
                        gpus = new HashSet<>();
                        for (GpuGrant g : grants) gpus.add(CycleState.gpuKey(g.node(), g.gpu()));
                    }
                    EasyReservation made = new EasyReservation(job.id(), ends.lastEndMs(), gpus);
                    return memoizable ? memo.remember(ctx, version, job, made, ends.lastFixedEndMs(), ends.nextUnclampedEndMs()) : made;
                }
            }
            if (memoizable) memo.remember(ctx, version, job, null, Long.MIN_VALUE, ends.nextUnclampedEndMs());
            return null;
        } finally {
            cluster.rollback(mark);
        }
    }

    /**
     * Whether a node the grants were on could now hold one replica, by the capacity filter's measure (a
     * necessary condition for placing). If none can, the nodes able to hold a replica are the same as before
     * the release and a placement that failed would fail again.
     */
    private static boolean anyCouldHoldReplica(ClusterState cluster, List<GpuGrant> freed, JobSpec job, ReplicaDemand d) {
        int last = -1;
        for (GpuGrant g : freed) {
            if (g.node() == last) continue;
            last = g.node();
            NodeState n = cluster.node(g.node());
            if (n.cordoned() || !job.allows(n.model())) continue;
            if (!n.hostFits(d.host().cpuMilli(), d.host().memoryMib())) continue;
            if (!d.exclusive() ? n.maxShareableMilli() >= d.milli()
                    : d.requireNvlink() && d.gpus() > 1 ? n.maxIdleInNvlinkDomain() >= d.gpus() : n.fullyFreeGpus() >= d.gpus()) {
                return true;
            }
        }
        return false;
    }
}
