package io.gpupool.agent.run;

import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GrantedGpu;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.model.SpecException;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The environment a job's process gets. It starts clean (a few variables of the agent pass through, so
 * the agent's own secrets never reach a job), adds the job's variables, then the GPU variables, which no
 * job variable can override:
 *
 * <ul>
 *   <li>{@code CUDA_VISIBLE_DEVICES}: the granted GPUs' UUIDs in grant order; CUDA numbers them 0..n-1 and
 *       sees no other GPU. With no GPU granted it is empty, which hides every GPU.</li>
 *   <li>For a fractional grant, HAMi-core's variables (Project-HAMi/HAMi-core, read by its libvgpu.so when
 *       it is preloaded): {@code CUDA_DEVICE_MEMORY_LIMIT_<i>} = the memory of visible device i as
 *       {@code <MiB>m}, {@code CUDA_DEVICE_SM_LIMIT} = the compute share in percent (one value for all
 *       devices, as HAMi's device plugin sets it).</li>
 *   <li>{@code GPUPOOL_MEMORY_FRACTION} (and {@code GPUPOOL_MEMORY_FRACTION_<i>} per device): granted memory
 *       / the GPU's memory, for {@code torch.cuda.set_per_process_memory_fraction(float(os.environ[...]))};
 *       PyTorch then refuses to reserve more, where HAMi is not installed to enforce it.</li>
 *   <li>{@code GPUPOOL_JOB_ID}, {@code GPUPOOL_ATTEMPT}.</li>
 *   <li>{@code GPUPOOL_ARRAY_JOB_ID}, {@code GPUPOOL_ARRAY_TASK_ID} as the server sends them (set for a job array's
 *       task, removed from any other job by the server); every other {@code GPUPOOL_} name of a job's own is dropped.</li>
 * </ul>
 */
public final class JobEnvironment {

    /** Variables of the agent's own environment that a job inherits unless it sets them itself. */
    public static final List<String> DEFAULT_PASS_THROUGH = List.of(
            "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "TZ", "TMPDIR", "LD_LIBRARY_PATH");

    /** GPUPOOL_ variables the server sets in a launch's environment, passed on as they come. */
    static final java.util.Set<String> SERVER_SET = java.util.Set.of("GPUPOOL_ARRAY_JOB_ID", "GPUPOOL_ARRAY_TASK_ID");

    private JobEnvironment() {
    }

    /**
     * @param launch      the job
     * @param gpusByUuid  this node's GPUs
     * @param agentEnv    the agent's environment (System.getenv())
     * @param passThrough names taken from {@code agentEnv}
     * @throws SpecException when a granted GPU is not on this node
     */
    public static Map<String, String> of(JobLaunch launch, Map<String, GpuInfo> gpusByUuid, Map<String, String> agentEnv,
                                         List<String> passThrough) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String name : passThrough) {
            String v = agentEnv.get(name);
            if (v != null) env.put(name, v);
        }
        env.putAll(launch.env());
        // A job does not bring its own limits: the agent sets the real ones below.
        env.keySet().removeIf(JobEnvironment::reserved);
        env.put("GPUPOOL_JOB_ID", launch.jobId());
        env.put("GPUPOOL_ATTEMPT", Integer.toString(launch.attempt()));
        List<String> uuids = new ArrayList<>();
        boolean fractional = false;
        double smallestFraction = 1.0;
        for (int i = 0; i < launch.gpus().size(); i++) {
            GrantedGpu g = launch.gpus().get(i);
            GpuInfo gpu = gpusByUuid.get(g.uuid());
            if (gpu == null) {
                throw new SpecException("job " + launch.key(), "gpus", "GPU " + g.uuid() + " is not on this node");
            }
            uuids.add(g.uuid());
            if (g.whole()) continue;
            fractional = true;
            long mib = g.memoryOn(gpu.memoryTotalMib());
            double fraction = gpu.memoryTotalMib() > 0 ? Math.min(1.0, mib / (double) gpu.memoryTotalMib()) : 1.0;
            smallestFraction = Math.min(smallestFraction, fraction);
            env.put("CUDA_DEVICE_MEMORY_LIMIT_" + i, mib + "m");
            env.put("GPUPOOL_MEMORY_FRACTION_" + i, fractionText(fraction));
        }
        env.put("CUDA_VISIBLE_DEVICES", String.join(",", uuids));
        if (fractional) {
            // HAMi takes one SM limit for the container: the first device's share (fractional jobs have one GPU).
            env.put("CUDA_DEVICE_SM_LIMIT", Integer.toString((int) Math.ceil(launch.gpus().getFirst().milli() / 10.0)));
            env.put("GPUPOOL_MEMORY_FRACTION", fractionText(smallestFraction));
        }
        return env;
    }

    static boolean reserved(String name) {
        return name.equals("CUDA_VISIBLE_DEVICES") || name.equals("NVIDIA_VISIBLE_DEVICES")
                || name.startsWith("CUDA_DEVICE_MEMORY_LIMIT") || name.equals("CUDA_DEVICE_SM_LIMIT")
                || name.startsWith("GPUPOOL_") && !SERVER_SET.contains(name);
    }

    /**
     * Rounded down to 4 decimals, so the fraction never allows more than the grant ("0.3329"); by hand, as String.format
     * took a few percent of a job's start.
     */
    static String fractionText(double f) {
        long tenThousandths = (long) Math.floor(f * 10_000);
        String decimals = Long.toString(10_000 + tenThousandths % 10_000).substring(1);
        return tenThousandths / 10_000 + "." + decimals;
    }
}
