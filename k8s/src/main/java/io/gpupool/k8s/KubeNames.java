package io.gpupool.k8s;

/**
 * Names on the Kubernetes side that gpupool reads and writes. The HAMi ones are HAMi's contract between
 * its scheduler and its device plugin (Project-HAMi docs/develop/protocol.md): writing them makes a pod
 * placed by gpupool start under HAMi's device plugin exactly as if HAMi's own scheduler had placed it.
 */
public final class KubeNames {
    private KubeNames() {}

    // ---- resources a container asks for (HAMi's default names) ----------------------------------
    /** vGPUs (one per physical GPU); alone, whole GPUs. */
    public static final String GPU = "nvidia.com/gpu";
    /** GPU memory per vGPU, MiB. */
    public static final String GPU_MEM = "nvidia.com/gpumem";
    /** GPU memory per vGPU as a percentage of the card. */
    public static final String GPU_MEM_PERCENTAGE = "nvidia.com/gpumem-percentage";
    /** Compute per vGPU, percent of the card's SMs (0 = no limit, 100 = the whole card). */
    public static final String GPU_CORES = "nvidia.com/gpucores";

    // ---- pod annotations a user may set (HAMi's) -----------------------------------------------
    /** Comma-separated GPU types the pod may run on. */
    public static final String USE_GPU_TYPE = "nvidia.com/use-gputype";
    /** Comma-separated GPU types the pod must not run on. */
    public static final String NO_USE_GPU_TYPE = "nvidia.com/nouse-gputype";
    /** Pinning to GPU UUIDs (HAMi); not supported by gpupool, refused with a reason. */
    public static final String USE_GPU_UUID = "nvidia.com/use-gpuuuid";

    // ---- the decision, written on the pod (HAMi device-plugin contract) ----------------------------
    /** Devices still to be handed to containers by the device plugin; it empties this as it allocates. */
    public static final String DEVICES_TO_ALLOCATE = "hami.io/vgpu-devices-to-allocate";
    /** Devices granted, one entry per container: {@code UUID,NVIDIA,memMiB,cores:} ... {@code ;}. */
    public static final String DEVICES_ALLOCATED = "hami.io/vgpu-devices-allocated";
    /** The node the devices are on. */
    public static final String ASSIGNED_NODE = "hami.io/vgpu-node";
    /** When the decision was made (Unix seconds). */
    public static final String ASSIGNED_TIME = "hami.io/vgpu-time";
    public static final String BIND_TIME = "hami.io/bind-time";
    /** allocating (decision written), success / failed (set by the device plugin). */
    public static final String BIND_PHASE = "hami.io/bind-phase";
    public static final String BIND_PHASE_ALLOCATING = "allocating";
    public static final String BIND_PHASE_FAILED = "failed";
    /** Device type keyword in the decision strings. */
    public static final String NVIDIA = "NVIDIA";

    // ---- node: devices registered by HAMi's device plugin, and GPU feature discovery labels ---------
    public static final String NODE_NVIDIA_REGISTER = "hami.io/node-nvidia-register";
    public static final String GFD_COUNT = "nvidia.com/gpu.count";
    public static final String GFD_PRODUCT = "nvidia.com/gpu.product";
    /** MiB per GPU. */
    public static final String GFD_MEMORY = "nvidia.com/gpu.memory";

    // ---- gpupool's own pod annotations ---------------------------------------------------------
    /** Gang name: pods of one namespace with the same gang start together or not at all. */
    public static final String GANG = "gpupool.io/gang";
    /** How many pods of the gang must be placeable together before any is bound. */
    public static final String GANG_MIN_MEMBERS = "gpupool.io/gang-min-members";
    /** "true": each pod's GPUs must sit inside one NVLink domain. */
    public static final String REQUIRE_NVLINK = "gpupool.io/require-nvlink";
    /** The user's run-time estimate in seconds (backfill and prediction-based policies use it). */
    public static final String ESTIMATE_SECONDS = "gpupool.io/estimate-seconds";
    /** The engine job that placed the pod (the gang's name for gang members). */
    public static final String JOB = "gpupool.io/job";
    /** The tenant the pod was charged to. */
    public static final String TENANT = "gpupool.io/tenant";
}
