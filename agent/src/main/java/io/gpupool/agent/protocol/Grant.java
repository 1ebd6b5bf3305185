package io.gpupool.agent.protocol;

import io.gpupool.model.GpuShare;
import io.gpupool.model.SpecException;

/**
 * One GPU, or a share of one, held by one replica of a job: the one form of a grant outside the engine. The API shows
 * it as it is (a job's {@code allocation}); the store's row, an attempt's record and the agent's launch
 * ({@link GrantedGpu#of}) are each made from it in one place.
 *
 * @param replica   the gang replica that holds it (0 for a job of one replica)
 * @param node      the node's name
 * @param gpu       the GPU's index on the node
 * @param uuid      the GPU's UUID, what the agent addresses it by
 * @param milli     compute share in thousandths (1000 = all of it)
 * @param memoryMib GPU memory held, in MiB (an exclusive grant holds all the GPU offers)
 * @param exclusive a whole GPU: no other job holds any part of it
 */
public record Grant(int replica, String node, int gpu, String uuid, int milli, long memoryMib, boolean exclusive) {
    public Grant {
        if (node == null || node.isBlank()) throw new SpecException("grant", "node", "must not be empty");
        String where = "grant on node " + node + " GPU " + gpu;
        if (replica < 0) throw new SpecException(where, "replica", "must be >= 0, got " + replica);
        if (gpu < 0) throw new SpecException(where, "gpu", "must be >= 0, got " + gpu);
        if (uuid == null || uuid.isBlank()) throw new SpecException(where, "uuid", "must not be empty");
        GpuShare.requireMilli(where, "milli", milli);
        if (memoryMib < 0) throw new SpecException(where, "memoryMib", "must be >= 0, got " + memoryMib);
    }
}
