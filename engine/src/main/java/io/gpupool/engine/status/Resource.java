package io.gpupool.engine.status;

/**
 * What a refusal is about, with the unit its {@link Status} amounts (requested / free / capacity) are in.
 */
public enum Resource {
    /** Whole GPUs on one node (a replica's GPUs). */
    GPUS,
    /** GPU compute in thousandths of a GPU: a share on one GPU (1..1000), or a tenant's GPUs summed (2 GPUs = 2000). */
    GPU_COMPUTE,
    /** Memory on one GPU, MiB. */
    GPU_MEMORY,
    /** The host's CPU on one node, thousandths of a core. */
    HOST_CPU,
    /** The host's memory on one node, MiB. */
    HOST_MEMORY,
    /** The job's allowed GPU models (no amounts). */
    GPU_MODEL,
    /** GPUs inside one NVLink domain. */
    NVLINK,
    /** Replicas the pool can hold at once, one per slot of a node (capacity 0: the pool has no nodes). */
    NODES,
    /** Not about an amount: a rule, a hold, a node's state or labels. */
    NONE
}
