package io.gpupool.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Failover time of a replicated service (docs/benchmarks.md, "Issue 18: failover"): two server replicas on one
 * PostgreSQL, one agent with fake GPUs, a stream of submissions (50 a second, jobs of 0.2 s); the active replica is
 * killed with SIGKILL, then started again as the standby, {@code -Dgpupool.ha.bench.cycles} times (20). Per cycle: from
 * the kill to the first submission the surviving replica accepts, and to the first job it placed that its agent
 * started (the agent's record of the spawn, on this machine's clock). Skipped unless {@code -Dgpupool.ha.bench=true}.
 */
class HaFailoverBench {
    @TempDir Path dir;

    @Test
    void failover_time_over_kill_9_cycles() throws Exception {
        assumeTrue(Boolean.getBoolean("gpupool.ha.bench"), "set -Dgpupool.ha.bench=true to run the bench");
        int cycles = Integer.getInteger("gpupool.ha.bench.cycles", 20);
        long leaseMs = Long.getLong("gpupool.ha.bench.leaseMs", ServerOptions.DEFAULT_LEASE_TTL_MS);
        try (OwnPostgres pg = OwnPostgres.startOrSkip(); FaultRig rig = new FaultRig(dir, "127.0.0.1", 1000, 30_000, 1000, 2000)) {
            rig.asShipped();   // the replicas and the agent run as `gpupool server`/`agent` do, not with the tests' C1-only JVMs
            String db = pg.createDatabase("ha_bench");
            int[] ports = {rig.port, FaultRig.freePort()};
            String[] urls = {rig.base, "http://127.0.0.1:" + ports[1]};
            Process[] procs = new Process[2];
            procs[0] = rig.startReplica(db, ports[0], leaseMs, "r0-0.log");
            procs[1] = rig.startReplica(db, ports[1], leaseMs, "r1-0.log");
            rig.servers.add(urls[1]);
            rig.setUp("fcfs");
            rig.startAgent(List.of(), "n1", "4xA100-80GB", urls[0] + "," + urls[1], "agent.log");
            FaultRig.waitFor(Duration.ofSeconds(60), "the agent registers", () -> rig.nodesIn("ready").contains("n1"));
            List<Long> toSubmit = new ArrayList<>();
            List<Long> toStart = new ArrayList<>();
            try (SubmissionStream stream = new SubmissionStream(List.of(urls[0], urls[1]), rig.team, "b-",
                    List.of("sh", dir.resolve("job.sh").toString(), "0.2")).start(50)) {
                for (int cycle = 1; cycle <= cycles; cycle++) {
                    int active = HaFencingTest.role(urls[0]).equals("active") ? 0 : 1;
                    int survivor = 1 - active;
                    FaultRig.waitFor(Duration.ofSeconds(60), "the replica " + urls[survivor] + " is the standby",
                            () -> HaFencingTest.role(urls[survivor]).equals("standby"));
                    int ackedBefore = stream.acked.size();
                    FaultRig.waitFor(Duration.ofSeconds(60), "submissions are acknowledged", () -> stream.acked.size() >= ackedBefore + 200);
                    long killWallMs = System.currentTimeMillis();
                    long killNanos = System.nanoTime();
                    procs[active].destroyForcibly();
                    procs[active].waitFor(10, TimeUnit.SECONDS);
                    String to = urls[survivor];
                    FaultRig.waitFor(Duration.ofSeconds(60), "a submission is accepted through " + to,
                            () -> stream.acked.values().stream().anyMatch(k -> k.atNanos() > killNanos && k.server().equals(to)));
                    long submitMs = TimeUnit.NANOSECONDS.toMillis(stream.acked.values().stream()
                            .filter(k -> k.atNanos() > killNanos && k.server().equals(to)).mapToLong(SubmissionStream.Ack::atNanos).min().orElseThrow() - killNanos);
                    long[] started = {-1};
                    FaultRig.waitFor(Duration.ofSeconds(60), "a job placed after the kill starts", () -> (started[0] = firstStartAfter(db, killWallMs)) >= 0);
                    long startMs = started[0] - killWallMs;
                    toSubmit.add(submitMs);
                    toStart.add(startMs);
                    System.out.printf(Locale.ROOT, "cycle %2d: killed %s; first submission accepted by %s after %5d ms, first job started after %5d ms%n",
                            cycle, urls[active], to, submitMs, startMs);
                    procs[active] = rig.startReplica(db, ports[active], leaseMs, "r" + active + "-" + cycle + ".log");
                }
                stream.stop();
                if (!stream.failed.isEmpty()) throw new AssertionError("submissions never acknowledged: " + stream.failed);
            }
            System.out.printf(Locale.ROOT, "failover over %d kill -9 cycles (lease %d ms): to the first accepted submission median %d ms, max %d ms; "
                    + "to the first job started median %d ms, max %d ms%n", cycles, leaseMs, median(toSubmit), max(toSubmit), median(toStart), max(toStart));
        }
    }

    /** The agent's start time (epoch ms) of the first attempt placed after {@code afterMs}, or -1. */
    private static long firstStartAfter(String db, long afterMs) {
        try (Connection c = DriverManager.getConnection(db);
             PreparedStatement ps = c.prepareStatement("SELECT MIN(started_ms) FROM job_attempts WHERE assigned_ms > ? AND started_ms IS NOT NULL")) {
            ps.setLong(1, afterMs);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long v = rs.getLong(1);
                return rs.wasNull() ? -1 : v;
            }
        } catch (Exception e) {
            return -1;
        }
    }

    private static long median(List<Long> v) {
        List<Long> s = v.stream().sorted().toList();
        return s.size() % 2 == 1 ? s.get(s.size() / 2) : (s.get(s.size() / 2 - 1) + s.get(s.size() / 2)) / 2;
    }

    private static long max(List<Long> v) {
        return v.stream().mapToLong(Long::longValue).max().orElse(0);
    }
}
