package io.gpupool.server.demo;

import io.gpupool.model.GpuDevice;
import io.gpupool.model.NodeSpec;
import io.gpupool.server.core.GpuTelemetry;
import io.gpupool.server.core.JobRequest;
import io.gpupool.server.core.PoolService;
import io.gpupool.server.core.PoolSnapshot;
import io.gpupool.server.core.ServiceClock;
import io.gpupool.server.core.ServiceException;
import io.gpupool.server.core.Views;
import io.gpupool.store.TenantRow;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * DEMO ONLY ({@code gpupool server --demo}). Until the node agent exists, this plays the agents of the
 * demo's fake nodes and a few teams submitting work, so a newcomer sees a busy pool at once:
 * <ul>
 *   <li>a synthetic workload from {@link #TENANTS} (fractional, 1-, 2-, 4- and 8-GPU jobs whose command is
 *       {@code sleep N}), submitted through the same service call as the REST API;</li>
 *   <li>fake agents that reconcile each demo node's assignments like a real agent would: a newly assigned
 *       job "runs" for N seconds (its {@code sleep}), then is reported SUCCEEDED (a few FAILED);</li>
 *   <li>fake telemetry per GPU that follows the shares of the jobs on it (utilization, memory, power,
 *       temperature), fed to the same store the agents' telemetry goes to.</li>
 * </ul>
 * Nothing here decides placement or order: the engine does.
 */
public final class DemoDriver implements AutoCloseable {
    public static final String SOURCE = "demo";
    public static final List<String> TENANTS = List.of("vision", "nlp", "research");
    private static final Logger LOG = LoggerFactory.getLogger(DemoDriver.class);
    private static final long TICK_MS = 500;
    private static final int MAX_PENDING = 12;
    private static final double ARRIVALS_PER_SEC = 0.25;
    private static final long DEFAULT_RUN_SEC = 300;

    private final PoolService pool;
    private final GpuTelemetry telemetry;
    private final ServiceClock clock;
    private final Random random;
    private final Thread thread;
    private volatile boolean running = true;
    /** job -> when the fake agent "started" it and how long it runs, per node. */
    private final Map<String, long[]> runs = new HashMap<>();
    private final Map<String, Double> activity = new HashMap<>();
    private int submitted;

    private DemoDriver(PoolService pool, GpuTelemetry telemetry, ServiceClock clock, long seed) {
        this.pool = pool;
        this.telemetry = telemetry;
        this.clock = clock;
        this.random = new Random(seed);
        this.thread = Thread.ofPlatform().name("gpupool-demo").daemon(true).start(this::run);
    }

    /** Creates the demo tenants if missing and starts the workload and the fake agents. */
    public static DemoDriver start(PoolService pool, GpuTelemetry telemetry, ServiceClock clock, long seed) {
        Set<String> have = new HashSet<>();
        for (TenantRow t : pool.tenants().join()) have.add(t.name());
        if (!have.contains("vision")) pool.putTenant("vision", 2, 4, 0, true).join();
        if (!have.contains("nlp")) pool.putTenant("nlp", 1, 0, 0, true).join();
        if (!have.contains("research")) pool.putTenant("research", 1, 0, 6, true).join();
        return new DemoDriver(pool, telemetry, clock, seed);
    }

    private void run() {
        try {
            List<NodeSpec> nodes = pool.nodesFrom(SOURCE).get(30, TimeUnit.SECONDS);
            for (int i = 0; i < 16; i++) submitOne(); // a busy pool from the first second
            while (running) {
                TimeUnit.MILLISECONDS.sleep(TICK_MS);
                if (random.nextDouble() < ARRIVALS_PER_SEC * TICK_MS / 1000.0 && pool.snapshot().pendingCount() < MAX_PENDING) submitOne();
                for (NodeSpec n : nodes) reconcile(n, pool.assignments(n.name()).get(30, TimeUnit.SECONDS));
                report(nodes, pool.snapshot());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            if (running) LOG.error("demo driver stopped", e);
        }
    }

    /** One synthetic job, through the same call the REST API makes. */
    private void submitOne() {
        String tenant = TENANTS.get(random.nextInt(TENANTS.size()));
        double r = random.nextDouble();
        int gpus = 1;
        int milli = 1000;
        long mem = 0;
        String kind;
        if (r < 0.35) {
            milli = random.nextBoolean() ? 250 : 500;
            mem = (8 + random.nextInt(5) * 8) * 1024L;
            kind = "notebook";
        } else if (r < 0.75) {
            kind = "finetune";
        } else if (r < 0.93) {
            gpus = 2;
            kind = "train";
        } else if (r < 0.98) {
            gpus = 4;
            kind = "train";
        } else {
            gpus = 8;
            kind = "pretrain";
        }
        long seconds = 30 + random.nextInt(150);
        List<String> types = tenant.equals("nlp") && gpus >= 4 ? List.of("A100-80GB") : List.of();
        String name = "demo/" + tenant + "-" + kind + "-" + (++submitted);
        JobRequest req = new JobRequest(name, tenant, "demo-workload", gpus, 0, milli, mem, types, random.nextInt(3), true, false, 0,
                List.of("sleep", String.valueOf(seconds)), Map.of("GPUPOOL_DEMO", "1"));
        pool.submit(req, null).exceptionally(e -> {
            LOG.debug("demo job not accepted: {}", e.getMessage());
            return null;
        });
    }

    /** A fake agent's reconciliation: start what is newly assigned, forget what was taken away, report what ended. */
    private void reconcile(NodeSpec node, List<Views.Assignment> assigned) {
        long now = clock.now();
        Set<String> ids = new HashSet<>();
        for (Views.Assignment a : assigned) {
            ids.add(a.jobId());
            String key = node.name() + "/" + a.jobId();
            long[] run = runs.get(key);
            if (run == null) {
                runs.put(key, new long[] {now, runSeconds(a.command()) * 1000});
                pool.appendLogs(a.jobId(), List.of("[demo agent " + node.name() + "] started " + String.join(" ", a.command())
                        + " on GPU " + a.grants().stream().map(g -> String.valueOf(g.gpu())).distinct().toList()));
                continue;
            }
            boolean firstReplica = a.grants().getFirst().replica() == 0;
            if (now - run[0] >= run[1] && firstReplica) {
                boolean ok = random.nextDouble() >= 0.05;
                pool.appendLogs(a.jobId(), List.of("[demo agent " + node.name() + "] exited with code " + (ok ? 0 : 1)));
                pool.finish(a.jobId(), ok, ok ? 0 : 1, ok ? null : "demo: simulated failure (exit 1)").exceptionally(e -> {
                    if (!(e.getCause() instanceof ServiceException)) LOG.warn("demo finish failed", e);
                    return null;
                });
                run[1] = Long.MAX_VALUE; // reported once
            }
        }
        runs.keySet().removeIf(k -> k.startsWith(node.name() + "/") && !ids.contains(k.substring(node.name().length() + 1)));
    }

    private static long runSeconds(List<String> command) {
        if (command.size() == 2 && command.get(0).equals("sleep")) {
            try {
                return Math.max(1, Long.parseLong(command.get(1)));
            } catch (NumberFormatException ignored) {
                // not a plain sleep: default below
            }
        }
        return DEFAULT_RUN_SEC;
    }

    /** Fake DCGM readings that follow the jobs' shares on each GPU. */
    private void report(List<NodeSpec> nodes, PoolSnapshot snap) {
        long now = clock.now();
        for (PoolSnapshot.NodeView nv : snap.nodes()) {
            NodeSpec spec = nodes.stream().filter(n -> n.name().equals(nv.name())).findFirst().orElse(null);
            if (spec == null) continue;
            for (PoolSnapshot.GpuView g : nv.gpus()) {
                GpuDevice d = spec.gpus().get(g.index());
                double util = 0;
                long used = 0;
                for (PoolSnapshot.TaskView t : g.tasks()) {
                    // how busy the job keeps its share: starts at 80-98%, then wanders a little
                    double act = activity.compute(t.jobId() == null ? "?" : t.jobId(), (k, old) -> old == null
                            ? 0.8 + random.nextDouble() * 0.18 : Math.max(0.6, Math.min(1.0, old + (random.nextDouble() - 0.5) * 0.1)));
                    util += t.milli() / 10.0 * act;
                    used += (long) (Math.min(t.memoryMib(), g.memoryMib()) * (0.8 + 0.15 * act));
                }
                util = Math.min(100, util);
                used = Math.min(g.memoryMib(), used);
                int tdp = d.model().tdpWatts() > 0 ? d.model().tdpWatts() : 300;
                double power = tdp * (0.18 + 0.8 * util / 100) + random.nextGaussian() * 3;
                double temp = 31 + 46 * util / 100 + random.nextGaussian();
                telemetry.put(nv.name(), g.index(), new GpuTelemetry.Sample(Math.round(util * 10) / 10.0, used, g.memoryMib() - used,
                        Math.round(Math.max(0, power) * 10) / 10.0, Math.round(temp * 10) / 10.0, now));
            }
        }
        if (activity.size() > 10_000) activity.clear();
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
