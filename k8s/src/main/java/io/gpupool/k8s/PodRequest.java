package io.gpupool.k8s;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpupool.model.GangShape;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuModel;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;

import java.math.BigDecimal;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * What a pod asks of the GPU pool, read the way HAMi reads it: {@code nvidia.com/gpu} vGPUs, each with
 * {@code nvidia.com/gpumem} MiB or {@code nvidia.com/gpumem-percentage} of the card's memory and
 * {@code nvidia.com/gpucores} percent of its compute (limits first, then requests).
 *
 * <p>Mapping to the engine's {@link GpuShare}: no memory and no compute given (or 100%) is a whole,
 * exclusive GPU; otherwise one GPU is shared: compute = gpucores (or, without it, the memory
 * percentage; with only gpumem, HAMi's "no compute limit", the smallest share), memory = gpumem MiB or
 * the percentage of the card. gpupool shares one GPU per pod and grants GPUs to one container.
 *
 * @param container     index of the container that gets the GPUs
 * @param gpus          GPUs (vGPUs) the container gets
 * @param share         what each GPU must offer
 * @param cores         gpucores as written in the decision (0 = no limit, 100 for a whole GPU)
 * @param allowedModels catalog model ids the pod may run on; empty = any
 * @param gang          gang name, or null
 * @param gangMinMembers pods of the gang that must start together (1 without a gang)
 */
public record PodRequest(int container, int gpus, GpuShare share, int cores, Set<String> allowedModels,
                         boolean requireNvlink, String gang, int gangMinMembers, int priority, OptionalLong estimateMs) {

    /** The pod's GPU request, or null when it asks for no GPU. Bad input is a {@link SpecException}. */
    public static PodRequest of(Pod pod, GpuCatalog catalog) {
        String where = "pod " + Pods.key(pod);
        List<Container> containers = pod.getSpec() == null ? List.of() : pod.getSpec().getContainers();
        int found = -1;
        long count = 0, mem = 0, pct = -1, cores = -1;
        for (int i = 0; i < containers.size(); i++) {
            Container c = containers.get(i);
            String field = "containers[" + i + "].resources";
            long n = amount(c, KubeNames.GPU, where, field);
            long m = amount(c, KubeNames.GPU_MEM, where, field);
            long p = amount(c, KubeNames.GPU_MEM_PERCENTAGE, where, field);
            long k = amount(c, KubeNames.GPU_CORES, where, field);
            if (n < 0 && m < 0 && p < 0 && k < 0) continue;
            if (found >= 0) {
                throw new SpecException(where, field, "containers " + containers.get(found).getName() + " and " + c.getName()
                        + " both ask for GPUs; gpupool grants GPUs to one container per pod");
            }
            found = i;
            count = n < 0 ? 1 : n;   // HAMi's defaultGPUNum: memory or cores alone mean one vGPU
            mem = Math.max(m, 0);
            pct = p;
            cores = k;
            if (count < 1) throw new SpecException(where, field + "." + KubeNames.GPU, "must be >= 1, got " + count);
            if (m == 0) throw new SpecException(where, field + "." + KubeNames.GPU_MEM, "must be > 0 MiB");
            if (p == 0 || p > 100) throw new SpecException(where, field + "." + KubeNames.GPU_MEM_PERCENTAGE, "must be in 1..100, got " + p);
            if (k > 100) throw new SpecException(where, field + "." + KubeNames.GPU_CORES, "must be in 0..100, got " + k);
        }
        if (found < 0) return null;
        String field = "containers[" + found + "].resources";
        boolean fullMemory = mem == 0 && (pct < 0 || pct == 100);
        boolean fullCompute = cores <= 0 || cores == 100;
        GpuShare share;
        int writtenCores;
        if (fullMemory && fullCompute) {
            share = GpuShare.WHOLE_GPU;
            writtenCores = 100;
        } else {
            int milli;
            long memoryMib;
            if (mem > 0) {
                memoryMib = mem;
                milli = cores > 0 ? (int) cores * 10 : 1;
            } else if (pct > 0 && pct < 100) {
                if (cores > 0 && cores != pct) {
                    throw new SpecException(where, field + "." + KubeNames.GPU_MEM_PERCENTAGE, pct + "% of memory with " + cores
                            + "% of compute: gpupool sizes memory by percentage only with an equal compute share; give "
                            + KubeNames.GPU_MEM + " in MiB instead");
                }
                memoryMib = 0;   // the engine sizes memory in proportion to the compute share on the chosen card
                milli = (int) pct * 10;
            } else {
                memoryMib = 0;   // all memory, part of the compute: the share's memory follows the compute share
                milli = (int) cores * 10;
            }
            share = new GpuShare(milli, memoryMib);
            try {
                GpuShare.requireOneGpuIfShared(where, field, field, milli, memoryMib, count);
            } catch (SpecException e) {
                throw new SpecException(where, field, e.rule() + ": ask for " + KubeNames.GPU + ": 1 with memory/cores, or for whole GPUs");
            }
            writtenCores = (int) Math.max(cores, 0);
        }
        Map<String, String> ann = Pods.annotations(pod);
        if (ann.containsKey(KubeNames.USE_GPU_UUID)) {
            throw new SpecException(where, KubeNames.USE_GPU_UUID, "pinning to GPU UUIDs is not supported by gpupool; use " + KubeNames.USE_GPU_TYPE);
        }
        Set<String> allowed = allowedModels(ann, catalog, where);
        String gang = ann.get(KubeNames.GANG);
        int min = 1;
        if (gang != null) {
            if (gang.isBlank()) throw new SpecException(where, KubeNames.GANG, "must not be empty");
            min = (int) positive(ann.get(KubeNames.GANG_MIN_MEMBERS), where, KubeNames.GANG_MIN_MEMBERS);
            if (!share.isWhole()) throw new SpecException(where, KubeNames.GANG, "gang members need whole GPUs; this pod asks for a share of one");
        } else if (ann.containsKey(KubeNames.GANG_MIN_MEMBERS)) {
            throw new SpecException(where, KubeNames.GANG_MIN_MEMBERS, "is set but " + KubeNames.GANG + " is not");
        }
        String nv = ann.getOrDefault(KubeNames.REQUIRE_NVLINK, "false").trim();
        if (!nv.equals("true") && !nv.equals("false")) throw new SpecException(where, KubeNames.REQUIRE_NVLINK, "must be true or false, got '" + nv + "'");
        String est = ann.get(KubeNames.ESTIMATE_SECONDS);
        OptionalLong estimate = est == null ? OptionalLong.empty() : OptionalLong.of(positive(est, where, KubeNames.ESTIMATE_SECONDS) * 1000);
        Integer prio = pod.getSpec().getPriority();
        return new PodRequest(found, (int) count, share, writtenCores, allowed, nv.equals("true"), gang, min, prio == null ? 0 : prio, estimate);
    }

    /** The engine job for this request: {@code replicas} pods of this shape (1 without a gang). */
    public JobSpec toJob(String id, String tenant, String user, String name, long submitMs, int replicas) {
        return new JobSpec(id, tenant, user, name, priority, Math.max(0, submitMs), new GangShape(replicas, gpus), share,
                allowedModels, true, requireNvlink, estimateMs);
    }

    /** Same GPUs and constraints (gang members must be alike: they are replicas of one shape). */
    public boolean sameShape(PodRequest o) {
        return gpus == o.gpus && share.equals(o.share) && allowedModels.equals(o.allowedModels) && requireNvlink == o.requireNvlink;
    }

    private static Set<String> allowedModels(Map<String, String> ann, GpuCatalog catalog, String where) {
        String use = ann.get(KubeNames.USE_GPU_TYPE);
        String noUse = ann.get(KubeNames.NO_USE_GPU_TYPE);
        if (use == null && noUse == null) return Set.of();
        Set<String> allowed = new LinkedHashSet<>();
        if (use != null) {
            for (String t : use.split(",")) if (!t.isBlank()) allowed.add(catalog.require(t.trim(), where + " " + KubeNames.USE_GPU_TYPE).id());
        } else {
            catalog.all().forEach(m -> allowed.add(m.id()));
        }
        if (noUse != null) {
            for (String t : noUse.split(",")) if (!t.isBlank()) allowed.remove(catalog.require(t.trim(), where + " " + KubeNames.NO_USE_GPU_TYPE).id());
        }
        if (allowed.isEmpty()) throw new SpecException(where, KubeNames.USE_GPU_TYPE, "no GPU type is left that the pod may use");
        return allowed;
    }

    /** A resource amount as a whole number, limits first; -1 when absent. */
    private static long amount(Container c, String resource, String where, String field) {
        Quantity q = null;
        if (c.getResources() != null) {
            if (c.getResources().getLimits() != null) q = c.getResources().getLimits().get(resource);
            if (q == null && c.getResources().getRequests() != null) q = c.getResources().getRequests().get(resource);
        }
        if (q == null) return -1;
        BigDecimal v;
        try {
            v = q.getNumericalAmount();
        } catch (RuntimeException e) {
            throw new SpecException(where, field + "." + resource, "'" + q + "' is not a quantity");
        }
        if (v.signum() < 0 || v.stripTrailingZeros().scale() > 0) {
            throw new SpecException(where, field + "." + resource, "must be a whole number >= 0, got " + q);
        }
        return v.longValueExact();
    }

    private static long positive(String v, String where, String field) {
        try {
            long n = Long.parseLong(v == null ? "" : v.trim());
            if (n >= 1) return n;
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new SpecException(where, field, "must be a whole number >= 1, got '" + v + "'");
    }

    /** Whether a model is allowed (any when the set is empty). */
    public boolean allows(GpuModel m) {
        return allowedModels.isEmpty() || allowedModels.contains(m.id());
    }
}
