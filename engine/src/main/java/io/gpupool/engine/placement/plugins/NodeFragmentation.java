package io.gpupool.engine.placement.plugins;

import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.state.NodeState;

import java.util.List;

/**
 * A node's fragmentation against a workload ({@link Fragmentation}), computed once, and what it would be
 * after a tentative grant, computed from the change alone. For a fractional task shape, fragmentation is a
 * sum of per-GPU terms, so a grant changes only the terms of the GPUs it touches; for a whole-GPU shape it
 * depends only on the node's usable free compute and its idle-GPU count. So trying a grant costs
 * O(shapes x GPUs granted), not O(shapes x GPUs of the node): the FGD GPU policy tries every GPU of every
 * candidate node. A shape the node cannot serve at all (GPU model not allowed, host CPU or memory short)
 * counts all free compute; a grant's host request can only add shapes to that set. Per-shape values are
 * exact integers, weighted in the same order as a full recomputation, so the result is bit-for-bit the same.
 */
final class NodeFragmentation {
    private final NodeState node;
    private final List<WorkloadProfile.Shape> shapes;
    private final int[] free;
    private final boolean[] idle;
    private final long[] perShape;
    private final long[] scratch;
    private final boolean[] barred;      // shapes this node cannot serve (model, host): all free capacity is fragment
    private final boolean anyHost;       // whether some shape asks for host resources
    private long freeTotal;
    private int idleCount;

    NodeFragmentation(NodeState n, List<WorkloadProfile.Shape> shapes) {
        this.node = n;
        this.shapes = shapes;
        int count = n.gpuCount();
        free = new int[count];
        idle = new boolean[count];
        for (int g = 0; g < count; g++) {
            boolean usable = n.healthy(g) && (n.tasks(g) == 0 || n.canShare(g));
            free[g] = usable ? n.freeMilli(g) : 0;
            idle[g] = n.isFullyFree(g);
            freeTotal += free[g];
            if (idle[g]) idleCount++;
        }
        perShape = new long[shapes.size()];
        scratch = new long[shapes.size()];
        barred = new boolean[shapes.size()];
        boolean host = false;
        for (int s = 0; s < perShape.length; s++) {
            WorkloadProfile.Shape shape = shapes.get(s);
            host |= shape.host().requested();
            barred[s] = !shape.allows(n.model().id()) || !n.hostFits(shape.host().cpuMilli(), shape.host().memoryMib());
            if (barred[s]) {
                perShape[s] = freeTotal;
            } else if (shape.milli() < 1000) {
                long f = 0;
                for (int g = 0; g < count; g++) f += fractionalTerm(free[g], shape.milli());
                perShape[s] = f;
            } else {
                perShape[s] = wholeTerm(freeTotal, idleCount, shape.gpus());
            }
        }
        anyHost = host;
    }

    /** Fragmentation now, in thousandths of a GPU. */
    double now() {
        return weighted(perShape);
    }

    /** Fragmentation if the grant were applied to {@code gpus} (the node itself is not changed). */
    double after(ReplicaDemand grant, int[] gpus) {
        System.arraycopy(perShape, 0, scratch, 0, perShape.length);
        long total = freeTotal;
        int idleAfter = idleCount;
        for (int g : gpus) {
            int before = free[g];
            int left = grant.exclusive() || node.tasks(g) + 1 >= node.spec().splitCount() ? 0 : before - grant.milli();
            total += left - before;
            if (idle[g]) idleAfter--;
            for (int s = 0; s < scratch.length; s++) {
                int milli = shapes.get(s).milli();
                if (milli < 1000 && !barred[s]) scratch[s] += fractionalTerm(left, milli) - fractionalTerm(before, milli);
            }
        }
        boolean hostTaken = anyHost && grant.host().requested();
        long cpuLeft = node.freeCpuMilli() - grant.host().cpuMilli();
        long memLeft = node.freeHostMemoryMib() - grant.host().memoryMib();
        for (int s = 0; s < scratch.length; s++) {
            WorkloadProfile.Shape shape = shapes.get(s);
            if (barred[s] || hostTaken && (cpuLeft < shape.host().cpuMilli() || memLeft < shape.host().memoryMib())) scratch[s] = total;
            else if (shape.milli() >= 1000) scratch[s] = wholeTerm(total, idleAfter, shape.gpus());
        }
        return weighted(scratch);
    }

    private double weighted(long[] values) {
        double total = 0;
        for (int s = 0; s < values.length; s++) total += shapes.get(s).weight() * values[s];
        return total;
    }

    /** Free compute on one GPU that a task of {@code milli} cannot use. */
    static long fractionalTerm(int free, int milli) {
        return free < milli ? free : 0;
    }

    /** Free compute a task of {@code gpus} whole GPUs cannot use: all of it unless enough GPUs are idle, else the non-idle rest. */
    static long wholeTerm(long freeTotal, int idleCount, int gpus) {
        return idleCount < gpus ? freeTotal : freeTotal - 1000L * idleCount;
    }
}
