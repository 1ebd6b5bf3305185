package io.gpupool.optimize;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * Random instances small enough to enumerate: 2-3 nodes of 2-4 GPUs (A100 with one or two NVLink domains,
 * T4 without), sometimes a GPU already shared, a tight split count or memory oversubscription, and 3-6 jobs
 * of every kind the model handles (whole GPUs, gangs, NVLink-bound replicas, shares with and without a
 * memory cap, model restrictions, priorities).
 */
final class SmallInstances {
    private static final GpuModel A100 = GpuCatalog.standard().require("A100-80GB", "test");
    private static final GpuModel T4 = GpuCatalog.standard().require("T4", "test");

    private SmallInstances() {}

    static BatchProblem random(long seed) {
        Random r = new Random(seed);
        int nodeCount = 2 + r.nextInt(2);
        List<NodeSpec> nodes = new ArrayList<>();
        for (int i = 0; i < nodeCount; i++) {
            GpuModel m = r.nextInt(3) == 0 ? T4 : A100;
            int gpus = 2 + r.nextInt(3);
            List<List<Integer>> domains = List.of();
            if (m == A100) {
                domains = gpus == 4 && r.nextBoolean() ? List.of(List.of(0, 1), List.of(2, 3)) : List.of(IntStream.range(0, gpus).boxed().toList());
            }
            List<GpuDevice> devs = new ArrayList<>();
            for (int g = 0; g < gpus; g++) devs.add(new GpuDevice(g, "GPU-" + i + "-" + g, m, true));
            double oversub = r.nextInt(4) == 0 ? 1.5 : 1.0;
            int split = r.nextInt(4) == 0 ? 2 : 10;
            nodes.add(new NodeSpec("n" + i, devs, 64_000, 1 << 20, domains, oversub, split, Map.of()));
        }
        ClusterState cluster = new ClusterState(new ClusterSpec(nodes));
        PlacementPipeline pipeline = new PlacementPipeline(PlacementConfig.defaults());
        WorkloadProfile profile = new WorkloadProfile();
        int busy = r.nextInt(3);
        for (int b = 0; b < busy; b++) {
            JobSpec bg = r.nextBoolean() ? JobSpec.builder("bg" + b).milli(100 * (2 + r.nextInt(6))).build() : JobSpec.builder("bg" + b).gpus(1).build();
            pipeline.place(new CycleState(cluster, bg, profile, null), true);
        }
        int jobCount = 3 + r.nextInt(4);
        List<JobSpec> jobs = new ArrayList<>();
        for (int j = 0; j < jobCount; j++) jobs.add(job(r, "j" + j));
        jobs.forEach(profile::observe);
        return new BatchProblem(cluster, pipeline, profile, jobs);
    }

    private static JobSpec job(Random r, String id) {
        JobSpec.Builder b = JobSpec.builder(id).priority(r.nextInt(3));
        switch (r.nextInt(6)) {
            case 0, 1 -> b.share(new GpuShare(50 * (2 + r.nextInt(15)), r.nextInt(4) == 0 ? 20_000 : 0));
            case 2 -> b.gpus(1);
            case 3 -> b.gpus(2).requireNvlink(r.nextBoolean());
            case 4 -> b.shape(2, 1);
            default -> b.gpus(r.nextBoolean() ? 3 : 4);
        }
        if (r.nextInt(4) == 0) b.allowedModels(Set.of(r.nextBoolean() ? "A100-80GB" : "T4"));
        return b.build();
    }
}
