package io.gpupool.engine.placement.plugins;

import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.state.NodeState;

import java.util.List;

/**
 * Fragmentation of a node against a workload, as defined by Weng et al., "Beware of Fragmentation"
 * (USENIX ATC'23): for each task shape, the free GPU compute that a task of that shape could not use,
 * weighted by how common the shape is; a shape whose GPU models exclude the node's counts all of the node's
 * free capacity (as in the paper, where task types carry their GPU-type constraint), and so does a shape
 * whose host CPU or memory the node no longer has (the paper's "lack CPU" fragments: GPUs stranded on a
 * node whose CPUs are taken). A placement that raises it least is the FGD choice.
 * {@link NodeFragmentation} computes it, and its change under a tentative grant, incrementally.
 */
public final class Fragmentation {
    private Fragmentation() {}

    /** Fragmentation in thousandths of a GPU, with an optional tentative grant applied to {@code gpus}. */
    public static double of(NodeState n, List<WorkloadProfile.Shape> shapes, ReplicaDemand grant, int[] gpus) {
        NodeFragmentation f = new NodeFragmentation(n, shapes);
        return grant == null ? f.now() : f.after(grant, gpus);
    }

    /** The shapes to measure against: the learned profile, or the request itself before anything was seen. */
    static List<WorkloadProfile.Shape> shapes(WorkloadProfile profile, ReplicaDemand d) {
        if (profile != null && profile.observed() > 0) return profile.shapes();
        return List.of(new WorkloadProfile.Shape(d.gpus(), d.exclusive() ? 1000 : d.milli(), java.util.Set.of(), d.host(), 1.0));
    }
}
