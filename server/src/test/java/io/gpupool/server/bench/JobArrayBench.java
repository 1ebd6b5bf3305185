package io.gpupool.server.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.engine.RoundResult;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.JobSpec;
import io.gpupool.server.TestServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A 10,000-task job array (docs/benchmarks.md, "Issue 19: arrays"). Skipped unless {@code -Dgpupool.arrays.bench=true}.
 * <ul>
 *   <li>service: one POST of a 10,000-task array to a server (SQLite) with 64 static nodes of 8 fake GPUs: time
 *       until it is durable, until the pool is full (512 tasks running), heap held; then the same with {@code %16}
 *       (16 running, 9,984 waiting on the cap), and a cancel of the whole array;</li>
 *   <li>engine: the whole array scheduled through the same 64x8 pool, every running task ending after one time step,
 *       with and without {@code %16}: rounds, total and longest round time.</li>
 * </ul>
 */
class JobArrayBench {
    private static final int TASKS = 10_000;
    private static final String POOL = "64x8:A100-80GB";

    @TempDir Path dir;

    @Test
    void tenThousandTaskArray() {
        assumeTrue(Boolean.getBoolean("gpupool.arrays.bench"), "set -Dgpupool.arrays.bench=true to run the bench");
        try (TestServer s = TestServer.start(TestServer.options(dir).withCluster(POOL).withPolicy("fair-share"))) {
            String team = s.tenantWithToken("sweep", 1);
            long heap0 = heapAfterGc();
            service(s, team, "0-" + (TASKS - 1), 512, heap0);
            service(s, team, "0-" + (TASKS - 1) + "%16", 16, heap0);
        }
        for (String policy : List.of("fcfs", "fair-share")) {
            engine(policy, 0);
            engine(policy, 16);
        }
    }

    private static void service(TestServer s, String team, String spec, int running, long heap0) {
        long t0 = System.nanoTime();
        TestServer.Reply r = s.post("/api/v1/jobs", team, Map.of("name", "sweep", "numGpus", 1, "array", spec, "command", List.of("true")));
        long submitted = System.nanoTime();
        assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
        String id = r.text("id");
        TestServer.eventually(java.time.Duration.ofSeconds(120), running + " running",
                () -> s.get("/api/v1/pool", ADMIN).body().path("runningCount").asInt() == running);
        long full = System.nanoTime();
        long heap = heapAfterGc();
        JsonNode queue = s.get("/api/v1/pool", ADMIN).body().path("queue");
        assertThat(queue).hasSize(1);
        long c0 = System.nanoTime();
        TestServer.Reply c = s.delete("/api/v1/jobs/" + id, team);
        long cancelled = System.nanoTime();
        assertThat(c.body().path("cancelled").asInt()).isEqualTo(TASKS);
        System.out.printf(Locale.ROOT, "service %s: POST (durable) %.0f ms, %d running after %.0f ms, heap +%.1f MiB, cancel all %.0f ms%n",
                spec, ms(submitted - t0), running, ms(full - t0), (heap - heap0) / 1048576.0, ms(cancelled - c0));
    }

    private static void engine(String policy, int cap) {
        Scheduler e = new Scheduler(ClusterSpecs.parse(POOL, GpuCatalog.standard()), SchedulerConfig.defaults(policy));
        long t0 = System.nanoTime();
        for (int i = 0; i < TASKS; i++) {
            String id = "j1_" + i;
            e.submit(JobSpec.builder(id).tenant("default").gpus(1).submitMs(0).build(), 0);
            if (cap > 0) e.capConcurrency(id, "j1", cap);
        }
        long submitted = System.nanoTime();
        long now = 0;
        int rounds = 0;
        long longest = 0;
        int mostRunning = 0;
        List<String> running = new ArrayList<>();
        while (!e.pendingJobs().isEmpty() || !running.isEmpty()) {
            for (String id : running) e.complete(id, now);
            long r0 = System.nanoTime();
            RoundResult r = e.schedule(now);
            longest = Math.max(longest, System.nanoTime() - r0);
            rounds++;
            running = new ArrayList<>(r.started());
            mostRunning = Math.max(mostRunning, e.runningJobs().size());
            now += 1000;
        }
        long done = System.nanoTime();
        if (cap > 0) assertThat(mostRunning).isEqualTo(cap);
        System.out.printf(Locale.ROOT, "engine %s cap %d: submit %.0f ms, %d rounds in %.0f ms (%.2f ms per round, longest %.2f ms), at most %d running%n",
                policy, cap, ms(submitted - t0), rounds, ms(done - submitted), ms(done - submitted) / rounds, ms(longest), mostRunning);
    }

    private static long heapAfterGc() {
        for (int i = 0; i < 3; i++) System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
