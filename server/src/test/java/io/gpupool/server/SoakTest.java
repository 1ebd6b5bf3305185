package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.gpupool.server.FaultRig.waitFor;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The soak (bench/soak.sh, docs/benchmarks.md "Soak"; skipped unless {@code -Dgpupool.soak.minutes=N}): a server and
 * three agent processes run a steady mixed workload from three tenants under fair share (whole GPUs, shares with
 * memory, 2- and 4-GPU jobs, some with restart policy fail) for N minutes while a fault hits every 30-60 s, at random:
 * kill -9 of an agent (back after 1-20 s, so sometimes past the give-up time), a network partition of the agent in a
 * network namespace (root only; else a proxy cut), SIGSTOP of an agent, kill -9 of the server. Then everything is
 * healed, the last jobs end, and the invariants are checked: no job lost, none run twice at once (the lock oracle),
 * no attempt launched twice, every attempt's end recorded, no GPU used beyond its sharing settings (from the attempts'
 * grants and run times). The figures go to {@code soak-report.txt} in {@code -Dgpupool.soak.dir} (a temp dir otherwise).
 */
class SoakTest {
    private static final long REPORT_MS = 500;
    private static final long LOST_MS = 8_000;
    private static final long KILL_GRACE_MS = 1_000;
    private static final long MARGIN_MS = 3_000;

    private record Agent(String node, String gpus, List<String> prefix, String server) {}

    @Test
    void soak() throws Exception {
        double minutes = Double.parseDouble(System.getProperty("gpupool.soak.minutes", "0"));
        assumeTrue(minutes > 0, "set -Dgpupool.soak.minutes=N to run the soak");
        long seed = Long.getLong("gpupool.soak.seed", System.currentTimeMillis());
        Path dir = Path.of(System.getProperty("gpupool.soak.dir", Files.createTempDirectory("gpupool-soak").toString()));
        Files.createDirectories(dir);
        Random rnd = new Random(seed);
        boolean netns = NetworkPartition.unavailableBecause() == null;
        StringBuilder log = new StringBuilder();
        Map<String, Integer> faults = new TreeMap<>();
        try (NetworkPartition net = netns ? NetworkPartition.create() : null;
             FaultRig rig = new FaultRig(dir, netns ? net.hostIp() : "127.0.0.1", REPORT_MS, LOST_MS, KILL_GRACE_MS, MARGIN_MS);
             PausableProxy proxy = new PausableProxy(rig.port)) {
            Process server = rig.startServer("server-0.log");
            rig.setUp("fair-share");
            Map<String, String> tokens = new HashMap<>();
            tokens.put("vision", rig.tenant("vision", 2, 4, 0));
            tokens.put("nlp", rig.tenant("nlp", 1, 0, 0));
            tokens.put("research", rig.tenant("research", 1, 0, 6));
            List<Agent> agents = List.of(
                    new Agent("soak-a", "8xA100-80GB", List.of(), rig.base),
                    new Agent("soak-b", "8xA100-80GB", List.of(), rig.base),
                    netns ? new Agent("soak-c", "8xL40S", net.exec(), rig.base) : new Agent("soak-c", "8xL40S", List.of(), "http://127.0.0.1:" + proxy.port()));
            Map<String, Process> running = new HashMap<>();
            for (Agent a : agents) running.put(a.node(), rig.launchAgent(a.prefix(), a.node(), a.gpus(), a.server(), a.node() + "-0.log"));
            waitFor(Duration.ofSeconds(90), "three nodes ready", () -> rig.nodesIn("ready").size() == 3);

            List<String> all = Collections.synchronizedList(new ArrayList<>());
            AtomicBoolean submitting = new AtomicBoolean(true);
            Thread workload = Thread.ofPlatform().name("soak-workload").start(() -> {
                Random w = new Random(seed + 1);
                List<String> tenants = List.of("vision", "nlp", "research");
                while (submitting.get()) {
                    try {
                        JsonNode pool = rig.call("GET", "/api/v1/pool", FaultRig.ADMIN, null);
                        if (pool.path("queue").size() < 12) all.add(rig.submit(tokens.get(tenants.get(w.nextInt(3))), shape(w), 5 + w.nextDouble() * 35));
                    } catch (Exception | AssertionError e) {
                        // the server is being restarted: the next try goes through
                    }
                    FaultRig.sleep(300 + w.nextInt(700));
                }
            });

            long start = System.nanoTime();
            long end = start + (long) (minutes * 60e9);
            int serverRuns = 1;
            Map<String, Integer> agentRuns = new HashMap<>();
            while (System.nanoTime() < end) {
                FaultRig.sleep(30_000 + rnd.nextInt(30_000));
                if (System.nanoTime() >= end) break;
                int kind = rnd.nextInt(4);
                Agent a = agents.get(rnd.nextInt(agents.size()));
                long outMs = 1_000 + rnd.nextInt(19_000);
                String what;
                String name = List.of("agent kill -9", "partition", "agent SIGSTOP", "server kill -9").get(kind);
                switch (kind) {
                    case 0 -> {
                        what = "kill -9 agent " + a.node() + ", back after " + outMs + " ms";
                        Process p = running.get(a.node());
                        p.destroyForcibly();
                        p.waitFor(10, TimeUnit.SECONDS);
                        FaultRig.sleep(outMs);
                        int n = agentRuns.merge(a.node(), 1, Integer::sum);
                        running.put(a.node(), rig.launchAgent(a.prefix(), a.node(), a.gpus(), a.server(), a.node() + "-" + n + ".log"));
                    }
                    case 1 -> {
                        what = "partition of soak-c for " + outMs + " ms";
                        if (netns) net.cut();
                        else proxy.cut();
                        FaultRig.sleep(outMs);
                        if (netns) net.restore();
                        else proxy.restore();
                    }
                    case 2 -> {
                        what = "SIGSTOP agent " + a.node() + " for " + outMs + " ms";
                        FaultRig.signal(running.get(a.node()), "STOP");
                        FaultRig.sleep(outMs);
                        FaultRig.signal(running.get(a.node()), "CONT");
                    }
                    default -> {
                        long down = 1_000 + rnd.nextInt(4_000);
                        what = "kill -9 server, back after " + down + " ms";
                        server.destroyForcibly();
                        server.waitFor(10, TimeUnit.SECONDS);
                        FaultRig.sleep(down);
                        server = rig.startServer("server-" + serverRuns++ + ".log");
                    }
                }
                faults.merge(name, 1, Integer::sum);
                log.append(String.format(Locale.ROOT, "%6.1f s  %s%n", (System.nanoTime() - start) / 1e9, what));
            }
            submitting.set(false);
            workload.join();
            long stoppedAt = System.nanoTime();
            waitFor(Duration.ofSeconds(90), "three nodes ready after the last fault", () -> rig.nodesIn("ready").size() == 3);
            List<String> jobs = List.copyOf(all);
            // the last jobs run up to 40 s, but a tenant's capped 4-GPU jobs may wait for each other
            rig.waitForEnd(jobs, Duration.ofMinutes(15));
            long tail = System.nanoTime();

            // the invariants
            rig.checkInvariants(jobs);
            int attempts = 0;
            int requeued = 0;
            Map<String, Integer> states = new TreeMap<>();
            Map<String, List<long[]>> useByGpu = new HashMap<>(); // node/uuid -> [start, end, milli]
            for (String id : jobs) {
                JsonNode j = rig.job(id);
                states.merge(j.path("state").asText(), 1, Integer::sum);
                requeued += Math.max(0, j.path("attempts").size() - 1);
                for (JsonNode at : j.path("attempts")) {
                    attempts++;
                    assertThat(at.path("state").asText()).as(id + "#" + at.path("attempt").asInt() + " has its end recorded")
                            .isIn("SUCCEEDED", "FAILED", "STOPPED", "LOST");
                    if (at.path("startedMs").isNull()) continue;
                    for (JsonNode g : at.path("grants")) {
                        useByGpu.computeIfAbsent(at.path("node").asText() + "/" + g.path("uuid").asText(), k -> new ArrayList<>())
                                .add(new long[] {at.path("startedMs").asLong(), at.path("endedMs").asLong(), g.path("milli").asLong()});
                    }
                }
            }
            long worst = 0;
            for (var e : useByGpu.entrySet()) {
                long peak = peakMilli(e.getValue());
                worst = Math.max(worst, peak);
                assertThat(peak).as("compute in use at once on " + e.getKey()).isLessThanOrEqualTo(1000);
            }
            String report = String.format(Locale.ROOT, """
                    gpupool soak, %s, seed %d: %.1f min of workload and faults (%s), then %.0f s for the last jobs to end
                    lease %d ms, kill grace %d ms, margin %d ms, reports every %d ms
                    jobs %d %s, attempts %d (%d runs again after a fault or a preemption)
                    faults %s
                    twice at once: 0 (lock oracle), attempts launched twice: 0, ends not recorded: 0, peak compute on one GPU: %d milli
                    %s""", Instant.now(), seed, (stoppedAt - start) / 60e9, netns ? "partitions by netns" : "partitions by proxy",
                    (tail - stoppedAt) / 1e9, LOST_MS, KILL_GRACE_MS, MARGIN_MS, REPORT_MS, jobs.size(), states, attempts, requeued,
                    faults, worst, log);
            Files.writeString(dir.resolve("soak-report.txt"), report);
            System.out.println(report);
        }
    }

    /** The most compute used at one instant on one GPU, from [start, end, milli] intervals (an end frees before a start). */
    private static long peakMilli(List<long[]> uses) {
        List<long[]> events = new ArrayList<>();
        for (long[] u : uses) {
            events.add(new long[] {u[0], u[2]});
            events.add(new long[] {u[1], -u[2]});
        }
        events.sort((x, y) -> x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[1], y[1]));
        long now = 0;
        long peak = 0;
        for (long[] e : events) {
            now += e[1];
            peak = Math.max(peak, now);
        }
        return peak;
    }

    /** A job shape like the demo's: notebooks on shares, single-GPU runs, 2- and 4-GPU training; some fail on loss. */
    private static Map<String, Object> shape(Random w) {
        Map<String, Object> m = new HashMap<>();
        int k = w.nextInt(10);
        if (k < 3) {
            m.put("numGpus", 1);
            m.put("gpuMilli", List.of(250, 500).get(w.nextInt(2)));
            m.put("gpuMemMib", 8_000 + 4_000 * w.nextInt(3));
        } else if (k < 7) {
            m.put("numGpus", 1);
        } else if (k < 9) {
            m.put("numGpus", 2);
        } else {
            m.put("numGpus", 4);
        }
        if (w.nextInt(8) == 0) m.put("restartPolicy", "fail");
        return m;
    }
}
