package io.gpupool.engine;

import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.status.Code;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Status;
import io.gpupool.model.JobSpec;

import java.util.List;
import java.util.Map;

/**
 * Could the job ever run on this pool, were it empty? Checked at submit so that a job that can never
 * fit (16 GPUs in one replica on 8-GPU nodes, a model no node has) is rejected with the reason rather
 * than left pending silently. Every refusal is {@link Code#UNRESOLVABLE} from the plugin
 * {@link Status#FEASIBILITY}, about the resource the job asks too much of.
 */
final class Feasibility {
    private Feasibility() {}

    /** Null when the job can run on the empty pool, else why not. */
    static Status check(ClusterState cluster, JobSpec job, Map<String, TenantConfig> tenants) {
        TenantConfig t = tenants.get(job.tenant());
        double gpus = job.gpuMilliDemand() / 1000.0;
        if (t != null && t.hasLimit() && gpus > t.limitGpus() + 1e-9) {
            long limit = Math.round(t.limitGpus() * 1000);
            return never(Resource.GPU_COMPUTE, job.gpuMilliDemand(), limit, limit,
                    subject(job) + "asks for " + fmt(gpus) + " GPUs but tenant " + job.tenant() + " is limited to " + fmt(t.limitGpus()));
        }
        if (cluster.nodeCount() == 0) {
            return never(Resource.NODES, job.shape().replicas(), 0, 0, subject(job) + "cannot run: the pool has no nodes");
        }
        List<String> present = cluster.modelIds();
        if (!job.allowedModels().isEmpty() && job.allowedModels().stream().noneMatch(present::contains)) {
            return never(Resource.GPU_MODEL, Status.UNKNOWN, Status.UNKNOWN, Status.UNKNOWN,
                    subject(job) + "no node has an allowed GPU model " + job.allowedModels() + "; the pool has " + present);
        }
        int k = job.shape().gpusPerReplica();
        boolean oneDomain = job.requireNvlink() && k > 1;
        long slots = 0;
        int largest = 0;
        long memNeeded = job.share().memoryMib();
        long mostMemory = 0, mostCpu = 0, mostHostMemory = 0;
        boolean memOk = false;
        boolean hostOk = false;
        for (Map.Entry<ClusterState.NodeShape, Integer> e : cluster.nodeShapes().entrySet()) {
            ClusterState.NodeShape n = e.getKey();
            if (!job.allows(n.model())) continue;
            mostCpu = Math.max(mostCpu, n.cpuMilli());
            mostHostMemory = Math.max(mostHostMemory, n.hostMemoryMib());
            if (!n.hostHolds(job.host())) continue;
            hostOk = true;
            largest = Math.max(largest, oneDomain ? n.largestNvlinkDomain() : n.gpus());
            mostMemory = Math.max(mostMemory, n.memoryCapacityMib());
            if (!job.share().isWhole() && memNeeded > n.memoryCapacityMib()) continue;
            memOk = true;
            long perNode = k == 0 ? Long.MAX_VALUE   // a CPU-only job: only the host bounds it
                    : oneDomain ? n.nvlinkDomainSizes().stream().mapToInt(d -> d / k).sum() : n.gpus() / k;
            if (job.host().cpuMilli() > 0) perNode = Math.min(perNode, n.cpuMilli() / job.host().cpuMilli());
            if (job.host().memoryMib() > 0) perNode = Math.min(perNode, n.hostMemoryMib() / job.host().memoryMib());
            slots += perNode * e.getValue();
        }
        if (!hostOk) {
            String text = subject(job) + "asks for " + job.host() + " per replica, more than any node of an allowed GPU model offers";
            return job.host().cpuMilli() > mostCpu
                    ? never(Resource.HOST_CPU, job.host().cpuMilli(), mostCpu, mostCpu, text)
                    : never(Resource.HOST_MEMORY, job.host().memoryMib(), mostHostMemory, mostHostMemory, text);
        }
        if (!job.share().isWhole() && !memOk) {
            return never(Resource.GPU_MEMORY, memNeeded, mostMemory, mostMemory,
                    subject(job) + "asks for " + memNeeded + " MiB on one GPU, more than any allowed GPU offers");
        }
        if (largest < k) {
            return never(oneDomain ? Resource.NVLINK : Resource.GPUS, k, largest, largest,
                    subject(job) + "asks for " + k + " GPUs in one replica" + (job.requireNvlink() ? " inside one NVLink domain" : "")
                    + " but the largest " + (job.requireNvlink() ? "NVLink domain" : "node") + " of an allowed model has " + largest);
        }
        if (slots < job.shape().replicas()) {
            return never(Resource.NODES, job.shape().replicas(), slots, slots,
                    subject(job) + "asks for " + job.shape() + " GPUs but the pool can hold at most " + slots + " such replicas at once");
        }
        return null;
    }

    /** How a refusal names the job (made only when one is: most jobs fit, and this runs at every submit). */
    private static String subject(JobSpec job) {
        return "job " + job.id() + " ";
    }

    /** A refusal for good; on the empty pool free and capacity are the same. */
    private static Status never(Resource r, long requested, long free, long capacity, String message) {
        return new Status(Code.UNRESOLVABLE, Status.FEASIBILITY, r, requested, free, capacity, List.of(), message);
    }

    static String fmt(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
