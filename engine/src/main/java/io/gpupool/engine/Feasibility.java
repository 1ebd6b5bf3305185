package io.gpupool.engine;

import io.gpupool.engine.state.ClusterState;
import io.gpupool.model.JobSpec;

import java.util.List;
import java.util.Map;

/**
 * Could the job ever run on this pool, were it empty? Checked at submit so that a job that can never
 * fit (16 GPUs in one replica on 8-GPU nodes, a model no node has) is rejected with the reason rather
 * than left pending silently.
 */
final class Feasibility {
    private Feasibility() {}

    /** Null when the job can run on the empty pool, else why not. */
    static String check(ClusterState cluster, JobSpec job, Map<String, TenantConfig> tenants) {
        TenantConfig t = tenants.get(job.tenant());
        double gpus = job.gpuMilliDemand() / 1000.0;
        if (t != null && t.hasLimit() && gpus > t.limitGpus() + 1e-9) {
            return "asks for " + fmt(gpus) + " GPUs but tenant " + job.tenant() + " is limited to " + fmt(t.limitGpus());
        }
        List<String> present = cluster.modelIds();
        if (!job.allowedModels().isEmpty() && job.allowedModels().stream().noneMatch(present::contains)) {
            return "no node has an allowed GPU model " + job.allowedModels() + "; the pool has " + present;
        }
        int k = job.shape().gpusPerReplica();
        boolean oneDomain = job.requireNvlink() && k > 1;
        long slots = 0;
        int largest = 0;
        long memNeeded = job.share().memoryMib();
        boolean memOk = false;
        boolean hostOk = false;
        for (Map.Entry<ClusterState.NodeShape, Integer> e : cluster.nodeShapes().entrySet()) {
            ClusterState.NodeShape n = e.getKey();
            if (!job.allows(n.model())) continue;
            if (!n.hostHolds(job.host())) continue;
            hostOk = true;
            largest = Math.max(largest, oneDomain ? n.largestNvlinkDomain() : n.gpus());
            if (!job.share().isWhole() && memNeeded > n.memoryCapacityMib()) continue;
            memOk = true;
            long perNode = k == 0 ? Long.MAX_VALUE   // a CPU-only job: only the host bounds it
                    : oneDomain ? n.nvlinkDomainSizes().stream().mapToInt(d -> d / k).sum() : n.gpus() / k;
            if (job.host().cpuMilli() > 0) perNode = Math.min(perNode, n.cpuMilli() / job.host().cpuMilli());
            if (job.host().memoryMib() > 0) perNode = Math.min(perNode, n.hostMemoryMib() / job.host().memoryMib());
            slots += perNode * e.getValue();
        }
        if (!hostOk) {
            return "asks for " + job.host() + " per replica, more than any node of an allowed GPU model offers";
        }
        if (!job.share().isWhole() && !memOk) {
            return "asks for " + memNeeded + " MiB on one GPU, more than any allowed GPU offers";
        }
        if (largest < k) {
            return "asks for " + k + " GPUs in one replica" + (job.requireNvlink() ? " inside one NVLink domain" : "")
                    + " but the largest " + (job.requireNvlink() ? "NVLink domain" : "node") + " of an allowed model has " + largest;
        }
        if (slots < job.shape().replicas()) {
            return "asks for " + job.shape() + " GPUs but the pool can hold at most " + slots + " such replicas at once";
        }
        return null;
    }

    static String fmt(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
