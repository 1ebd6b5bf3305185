package io.gpupool.engine;

import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.GpuModel;
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
        long slots = 0;
        int largest = 0;
        long memNeeded = job.share().memoryMib();
        boolean memOk = false;
        for (NodeState n : cluster.nodes()) {
            GpuModel m = n.model();
            if (!job.allows(m)) continue;
            largest = Math.max(largest, job.requireNvlink() && k > 1 ? largestDomain(n) : n.gpuCount());
            if (!job.share().isWhole() && memNeeded > n.memoryCapacityMib()) continue;
            memOk = true;
            slots += job.requireNvlink() && k > 1 ? domainSlots(n, k) : n.gpuCount() / k;
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

    private static int largestDomain(NodeState n) {
        return n.spec().nvlinkDomains().stream().mapToInt(List::size).max().orElse(1);
    }

    private static long domainSlots(NodeState n, int k) {
        return n.spec().nvlinkDomains().stream().mapToInt(d -> d.size() / k).sum();
    }

    static String fmt(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
