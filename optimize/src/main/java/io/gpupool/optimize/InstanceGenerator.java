package io.gpupool.optimize;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * Seeded batch instances for tests and the solver benchmark: a mixed pool (A100 and H100 with NVSwitch, V100
 * with two 4-GPU NVLink domains, L40S and 4-GPU T4 nodes without NVLink) already running a background load
 * of about 30% of its GPUs (placed by the engine, so the free capacity is fragmented as in a live pool),
 * and a window of pending jobs with the mix of the engine benchmark: 30% fractional shares (sizes drawn with
 * the frequencies of the Alibaba openb trace, 810 to 110 thousandths; a tenth with a 4..16 GiB memory cap), otherwise 1 (40%), 2 (20%), 4 (20%)
 * or 8 (15%) whole GPUs or a 2x8 gang (5%); a quarter of the 4- and 8-GPU jobs need one NVLink domain;
 * 20% restrict the GPU model; priority 0 (50%), 1 (25%), 2 (15%) or 4 (10%).
 */
public final class InstanceGenerator {
    /** Share of the pool's GPU compute already in use when the batch arrives. */
    public static final double BACKGROUND_LOAD = 0.30;
    private static final String[] MODELS = {"A100-80GB", "H100-80GB", "V100-32GB", "L40S", "T4"};
    private static final int[] GPUS_PER_NODE = {8, 8, 8, 8, 4};
    private static final double[] NODE_MIX = {0.30, 0.20, 0.20, 0.15, 0.15};
    private static final List<Set<String>> RESTRICTIONS = List.of(
            Set.of("A100-80GB", "H100-80GB"), Set.of("H100-80GB"), Set.of("V100-32GB", "T4"), Set.of("L40S", "A100-80GB"));

    /** Share sizes of GPU-sharing tasks in the Alibaba openb trace (default list) and how many tasks ask each. */
    private static final int[] SHARE_MILLI = {810, 470, 320, 650, 230, 460, 590, 160, 550, 220, 370, 110};
    private static final int[] SHARE_COUNT = {1078, 750, 328, 253, 140, 128, 75, 74, 72, 62, 47, 24};

    private InstanceGenerator() {}

    private static int shareMilli(Random r) {
        int total = java.util.Arrays.stream(SHARE_COUNT).sum();
        int x = r.nextInt(total);
        for (int i = 0; i < SHARE_MILLI.length; i++) if ((x -= SHARE_COUNT[i]) < 0) return SHARE_MILLI[i];
        throw new AssertionError();
    }

    /** The cluster SPEC of a mixed pool of {@code nodes} nodes, e.g. {@code 3x8:A100-80GB,2x8:H100-80GB,...}. */
    public static String clusterSpec(int nodes) {
        int[] count = new int[MODELS.length];
        int given = 0;
        for (int m = 0; m < MODELS.length; m++) given += count[m] = (int) Math.floor(nodes * NODE_MIX[m]);
        for (int m = 0; given < nodes; m = (m + 1) % MODELS.length, given++) count[m]++;
        StringBuilder sb = new StringBuilder();
        for (int m = 0; m < MODELS.length; m++) {
            if (count[m] == 0) continue;
            if (!sb.isEmpty()) sb.append(',');
            sb.append(count[m]).append('x').append(GPUS_PER_NODE[m]).append(':').append(MODELS[m]);
        }
        return sb.toString();
    }

    /** A window of {@code count} pending jobs, ids {@code prefix0..}, all submitted at time 0. */
    public static List<JobSpec> jobs(int count, long seed, String prefix) {
        Random r = new Random(seed);
        List<JobSpec> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) out.add(job(r, prefix + i));
        return out;
    }

    static JobSpec job(Random r, String id) {
        JobSpec.Builder b = JobSpec.builder(id);
        double u = r.nextDouble();
        if (u < 0.30) {
            int milli = shareMilli(r);
            long mem = r.nextInt(10) == 0 ? 4096L * (1 + r.nextInt(4)) : 0;
            b.share(new GpuShare(milli, mem));
        } else {
            double w = r.nextDouble();
            if (w < 0.40) b.gpus(1);
            else if (w < 0.60) b.gpus(2);
            else if (w < 0.80) b.gpus(4);
            else if (w < 0.95) b.gpus(8);
            else b.shape(2, 8);
            JobSpec probe = b.build();
            if (probe.shape().gpusPerReplica() >= 4 && r.nextInt(4) == 0) b.requireNvlink(true);
        }
        if (r.nextInt(5) == 0) b.allowedModels(RESTRICTIONS.get(r.nextInt(RESTRICTIONS.size())));
        double p = r.nextDouble();
        b.priority(p < 0.5 ? 0 : p < 0.75 ? 1 : p < 0.9 ? 2 : 4);
        return b.build();
    }

    /**
     * A problem of {@code jobs} pending jobs over {@code nodes} mixed nodes, with the background load placed
     * by the engine's default pipeline. The same arguments give the same problem.
     */
    public static BatchProblem problem(int jobs, int nodes, long seed) {
        return problem(jobs, nodes, seed, BACKGROUND_LOAD);
    }

    /** As {@link #problem(int, int, long)} with another share of the GPUs already busy (0 = an empty pool). */
    public static BatchProblem problem(int jobs, int nodes, long seed, double backgroundLoad) {
        ClusterSpec spec = ClusterSpecs.parse(clusterSpec(nodes), GpuCatalog.standard());
        ClusterState cluster = new ClusterState(spec);
        PlacementPipeline pipeline = new PlacementPipeline(PlacementConfig.defaults());
        WorkloadProfile profile = new WorkloadProfile();
        Random r = new Random(seed ^ 0x5DEECE66DL);
        for (int i = 0; cluster.usedMilli() < backgroundLoad * cluster.totalMilli() && i < 10 * nodes * 8; i++) {
            JobSpec bg = job(r, "bg" + i);
            pipeline.place(new CycleState(cluster, bg, profile, null), true);
        }
        List<JobSpec> window = jobs(jobs, seed, "j");
        window.forEach(profile::observe);
        return new BatchProblem(cluster, pipeline, profile, window);
    }
}
