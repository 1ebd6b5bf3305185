package io.gpupool.server.demo;

import io.gpupool.agent.AgentLauncher;
import io.gpupool.agent.node.NodeAgent;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.NodeSpec;
import io.gpupool.server.auth.Role;
import io.gpupool.server.auth.Tokens;
import io.gpupool.server.core.JobRequest;
import io.gpupool.server.core.PoolService;
import io.gpupool.server.core.ServiceClock;
import io.gpupool.store.GroupCommitWriter;
import io.gpupool.store.TenantRow;
import io.gpupool.store.Write;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * DEMO ONLY ({@code gpupool server --demo}): a busy pool at once, on the real path.
 * <ul>
 *   <li>One real node agent per demo node, in this process, with fake GPUs ({@code --fake-gpus}): it registers
 *       over HTTP with a join token, runs each job as a real process ({@code sleep}) with the granted GPUs in
 *       its environment, ships its output and reports its end, exactly as {@code gpupool agent} does.</li>
 *   <li>A synthetic workload from {@link #TENANTS} (fractional notebooks, 1-, 2-, 4- and 8-GPU training jobs
 *       that print a line and sleep; a few fail), submitted through the same service call as the REST API.</li>
 * </ul>
 * Nothing here decides placement or order, and nothing reports a job's end but its agent.
 */
public final class DemoDriver implements AutoCloseable {
    public static final List<String> TENANTS = List.of("vision", "nlp", "research");
    private static final Logger LOG = LoggerFactory.getLogger(DemoDriver.class);
    private static final long TICK_MS = 500;
    private static final int MAX_PENDING = 12;
    private static final double ARRIVALS_PER_SEC = 0.25;

    private final PoolService pool;
    private final Random random;
    private final List<NodeAgent> agents;
    private final Thread thread;
    private volatile boolean running = true;
    private final int nodes;
    private int submitted;

    private DemoDriver(PoolService pool, List<NodeAgent> agents, long seed) {
        this.pool = pool;
        this.agents = agents;
        this.nodes = agents.size();
        this.random = new Random(seed);
        this.thread = Thread.ofPlatform().name("gpupool-demo").daemon(true).start(this::run);
    }

    /**
     * Creates the demo tenants if missing, starts one agent per node (work directories under {@code workRoot},
     * so a restarted demo re-adopts the jobs its agents left running) and the workload.
     *
     * @param server the server's own URL, which the agents register with
     * @param ca     for an https:// URL, the PEM certificates the agents trust (the server's own); else null
     */
    public static DemoDriver start(PoolService pool, GroupCommitWriter writer, Tokens tokens, ServiceClock clock, String server, Path ca,
                                   List<NodeSpec> nodes, Path workRoot, long seed) {
        Set<String> have = new HashSet<>();
        for (TenantRow t : pool.tenants().join()) have.add(t.name());
        if (!have.contains("vision")) pool.putTenant("vision", 2, 4, 0, true).join();
        if (!have.contains("nlp")) pool.putTenant("nlp", 1, 0, 0, true).join();
        if (!have.contains("research")) pool.putTenant("research", 1, 0, 6, true).join();
        Tokens.Minted join = Tokens.mint(Role.AGENT, null, "demo agents", clock.now());
        writer.submit(new Write.PutToken(join.row())).join();
        tokens.add(join.row());
        List<NodeAgent> agents = new ArrayList<>();
        try {
            for (NodeSpec n : nodes) {
                agents.add(AgentLauncher.start(AgentLauncher.Options.fake(server, join.token(), n.name(), workRoot.resolve(n.name()), fakeGpus(n))
                        .withKillGrace(Duration.ofSeconds(2)).withCa(ca)));
            }
        } catch (Exception e) {
            agents.forEach(NodeAgent::close);
            throw new IllegalStateException("cannot start the demo's node agents: " + e.getMessage(), e);
        }
        return new DemoDriver(pool, agents, seed);
    }

    /** {@code 8xA100-80GB,...}: the node's GPUs as the fake backend takes them. */
    static String fakeGpus(NodeSpec n) {
        List<String> groups = new ArrayList<>();
        String model = null;
        int count = 0;
        for (GpuDevice d : n.gpus()) {
            if (!d.model().id().equals(model) && count > 0) {
                groups.add(count + "x" + model);
                count = 0;
            }
            model = d.model().id();
            count++;
        }
        groups.add(count + "x" + model);
        return String.join(",", groups);
    }

    private void run() {
        try {
            // the agents register in the background: until they have, the pool has no GPUs and jobs would be refused
            for (int i = 0; i < 300 && readyNodes() < nodes; i++) TimeUnit.MILLISECONDS.sleep(100);
            for (int i = 0; i < 16; i++) submitOne(); // a busy pool from the first second
            while (running) {
                TimeUnit.MILLISECONDS.sleep(TICK_MS);
                if (random.nextDouble() < ARRIVALS_PER_SEC * TICK_MS / 1000.0 && pool.snapshot().pendingCount() < MAX_PENDING) submitOne();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            if (running) LOG.error("demo workload stopped", e);
        }
    }

    private long readyNodes() {
        return pool.snapshot().nodes().stream().filter(n -> n.state().equals("ready")).count();
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
        String script = "echo \"$(date +%T) $GPUPOOL_JOB_ID attempt $GPUPOOL_ATTEMPT: " + kind + " on CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\"; "
                + "sleep " + seconds + "; "
                + (random.nextDouble() < 0.05 ? "echo 'RuntimeError: CUDA error: an illegal memory access was encountered' >&2; exit 1"
                : "echo \"$(date +%T) done\"");
        JobRequest req = new JobRequest(name, tenant, "demo-workload", gpus, 0, milli, mem, types, random.nextInt(3), true, false, 0,
                List.of("sh", "-c", script), Map.of("GPUPOOL_DEMO", "1"), null, JobRequest.REQUEUE, 0, 0, null, 0, null);
        pool.submit(req, null).exceptionally(e -> {
            LOG.debug("demo job not accepted: {}", e.getMessage());
            return null;
        });
    }

    /** Stops the workload and the agents; their jobs are stopped too (a restarted demo runs them again). */
    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (NodeAgent a : agents) {
            try {
                a.closeAndStopJobs("the demo stopped", Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
