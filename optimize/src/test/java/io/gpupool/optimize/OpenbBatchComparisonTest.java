package io.gpupool.optimize;

import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.batch.BatchPlacers;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.sim.trace.TraceJob;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Batch mode against one-by-one placement on the Alibaba openb default list (a burst: every GPU pod pending
 * at once on the openb node list, as after maintenance or a morning rush). One by one = the engine's usual
 * round in arrival order, skipping pods that do not fit ({@code fair-share} with one tenant: oldest first,
 * no blocking); batch = the same round preceded by a solver over the whole queue (the simulator's first round
 * at t=0 is exactly this call). Compared: GPUs allocated right after the burst (share of the pool, unallocated
 * GPUs), and in the full run CP-SAT's bound on what any placement could allocate.
 *
 * <p>By default it runs on a seeded sample (a sixth of the nodes and of the pods), fast enough for every
 * build, and checks that batch mode never allocates less. With {@code -Dopenb.full=true} it runs the full
 * lists, also inflated to 120% of the pool's GPUs (pods drawn again with replacement, seed 1, as in the FGD
 * evaluation), and prints the table of docs/benchmarks.md (about 15 minutes on 2 busy cores).
 */
class OpenbBatchComparisonTest {
    private static final Path DIR = OpenbLoader.traces();

    @Test
    void batchModeAllocatesAtLeastAsMuchAsOneByOne() throws Exception {
        boolean full = Boolean.getBoolean("openb.full");
        ClusterSpec cluster = OpenbLoader.nodes(OpenbLoader.require(DIR.resolve("openb_node_list_gpu_node.csv")));
        List<TraceJob> pods = OpenbLoader.pods(OpenbLoader.require(DIR.resolve("openb_pod_list_default.csv")), 0);
        if (!full) {
            cluster = new ClusterSpec(sample(cluster.nodes(), 6));
            pods = sample(pods, 6);
        }
        StringBuilder table = new StringBuilder("| arrived GPU demand | placement | GPUs allocated | share of pool | unallocated GPUs | pods placed | round time (s) |\n|---|---|---:|---:|---:|---:|---:|\n");
        List<Double> inflations = full ? List.of(1.0, 1.2) : List.of(1.0);
        StringBuilder bounds = new StringBuilder();
        for (double inflation : inflations) {
            List<TraceJob> arrived = inflation == 1.0 ? pods : inflate(pods, inflation * cluster.totalGpus());
            double demand = arrived.stream().mapToLong(t -> t.spec().gpuMilliDemand()).sum() / 1000.0;
            String label = String.format(Locale.ROOT, "%.0f GPUs (%.0f%%)", demand, 100 * demand / cluster.totalGpus());
            long oneByOne = burst(cluster, arrived, null, "binpack,topology", label + " | one by one, binpack", table);
            burst(cluster, arrived, null, "fgd", label + " | one by one, FGD", table);
            for (String solver : full ? List.of("greedy", "aco:iterations=5,seconds=60", "cpsat:seconds=180") : List.of("greedy", "aco:iterations=3", "cpsat:seconds=5")) {
                long batch = burst(cluster, arrived, solver + (solver.contains(":") ? "," : ":") + "window=100000", "binpack,topology",
                        label + " | batch " + solver.replaceAll(":.*", ""), table);
                assertThat(batch).as(solver + " vs one by one").isGreaterThanOrEqualTo(oneByOne);
            }
            if (full) {
                // how far from the best possible: CP-SAT on the same burst, its bound and whether it proves the answer
                Scheduler s = new Scheduler(cluster, SchedulerConfig.defaults("fair-share"));
                for (TraceJob t : arrived) s.submit(t.spec(), 0);
                BatchProblem p = new BatchProblem(s.cluster(), s.pipeline(), s.workloadProfile(), arrived.stream().map(TraceJob::spec).toList());
                SolveResult r = new CpSatSolver().solve(p, SolveSettings.of(180, 1));
                bounds.append(String.format(Locale.ROOT, "%s: best %.2f GPUs, CP-SAT bound %.2f (%s; %s)%n", label, r.score().valueGpus(),
                        r.bound().orElseThrow() / 1000.0, r.optimal() ? "optimal" : "gap " + String.format(Locale.ROOT, "%.2f%%", 100 * r.gap().orElse(0)), r.detail()));
            }
        }
        System.out.println(table);
        System.out.println(bounds);
    }

    /** One round at t=0 with every pod pending; returns the GPU thousandths allocated. */
    private static long burst(ClusterSpec cluster, List<TraceJob> pods, String batch, String placement, String label, StringBuilder table) {
        Scheduler s = new Scheduler(cluster, SchedulerConfig.defaults("fair-share").withPlacement(PlacementConfig.parse(placement)));
        if (batch != null) s.setBatchPlacer(BatchPlacers.create(batch));
        for (TraceJob t : pods) s.submit(t.spec(), 0);
        long t0 = System.nanoTime();
        int started = s.schedule(0).started().size();
        double seconds = (System.nanoTime() - t0) / 1e9;
        s.checkConsistency();
        long used = s.cluster().usedMilli();
        table.append(String.format(Locale.ROOT, "| %s | %.2f | %.2f%% | %.2f | %d of %d | %.1f |%n", label, used / 1000.0,
                100.0 * used / s.cluster().totalMilli(), (s.cluster().totalMilli() - used) / 1000.0, started, pods.size(), seconds));
        return used;
    }

    private static <T> List<T> sample(List<T> all, int every) {
        List<T> out = new ArrayList<>();
        for (int i = 0; i < all.size(); i += every) out.add(all.get(i));
        return out;
    }

    /** The list, then pods drawn again with replacement (seed 1, fresh ids) until the demand reaches the target. */
    private static List<TraceJob> inflate(List<TraceJob> pods, double targetGpus) {
        List<TraceJob> out = new ArrayList<>(pods);
        Random r = new Random(1);
        double demand = pods.stream().mapToLong(t -> t.spec().gpuMilliDemand()).sum() / 1000.0;
        for (int k = 0; demand < targetGpus; k++) {
            TraceJob t = pods.get(r.nextInt(pods.size()));
            var s = t.spec();
            out.add(new TraceJob(new io.gpupool.model.JobSpec(s.id() + "-x" + k, s.tenant(), s.user(), s.name(), s.priority(), s.submitTimeMs(),
                    s.shape(), s.share(), s.allowedModels(), s.preemptible(), s.requireNvlink(), s.runtimeEstimateMs()), t.durationMs()));
            demand += s.gpuMilliDemand() / 1000.0;
        }
        return out;
    }
}
