package io.gpupool.server.bench;

import io.gpupool.server.AgentProcessMain;
import io.gpupool.server.ServerOptions;
import io.gpupool.server.TestServer;
import io.gpupool.server.core.AgentSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.gpupool.server.TestServer.ADMIN;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Jobs started per second end to end (docs/benchmarks.md, "Node agent"): a server and three agent
 * processes with fake GPUs (8 each, 240 slots of a tenth of a GPU) on loopback. Each job is a real process.
 * "Started" is the agent's record of the moment it spawned the process; the clock runs from the first
 * submission. Skipped unless {@code -Dgpupool.agent.bench=true}.
 * <ul>
 *   <li>burst: as many jobs as there are slots, submitted at once (16 clients), each {@code sleep 600} (a
 *       job's command is run directly, as {@code python train.py} would be): the
 *       whole pipeline (submit, commit, schedule, long poll, spawn, report) with no job ending meanwhile;
 *       then cancelled, and again ({@code gpupool.agent.bench.rounds});</li>
 *   <li>sustained: {@code gpupool.agent.bench.jobs} jobs of {@code sleep 0.5} through the same slots, so
 *       ends and starts interleave.</li>
 * </ul>
 */
class AgentStartBench {
    private static final java.lang.management.ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final int AGENTS = 3;
    private static final int GPUS = 8;
    private static final int SLOTS = AGENTS * GPUS * 10;

    @TempDir Path dir;

    @Test
    void jobsStartedPerSecond() throws Exception {
        assumeTrue(Boolean.getBoolean("gpupool.agent.bench"), "set -Dgpupool.agent.bench=true to run the bench");
        int rounds = Integer.getInteger("gpupool.agent.bench.rounds", 3);
        int sustained = Integer.getInteger("gpupool.agent.bench.jobs", 1200);
        // as `gpupool agent` runs jobs as root by default: in cgroups of their own, as nobody (-Dgpupool.agent.bench.installed=false:
        // unconfined, as the agent's account)
        boolean installed = Boolean.parseBoolean(System.getProperty("gpupool.agent.bench.installed", "true"))
                && "root".equals(System.getProperty("user.name"));
        // the jobs' accounts must reach their work directories: JUnit makes its temporary directory 0700
        if (installed) Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx--x--x"));
        ServerOptions o = TestServer.options(dir.resolve("server")).withCluster(null).withPolicy("fcfs")
                .withAgents(new AgentSettings(1000, 30_000));
        List<Process> agents = new ArrayList<>();
        // -Dgpupool.agent.bench.jfr=DIR: a profile of the server (and the bench's clients) in DIR/server.jfr
        String jfr = System.getProperty("gpupool.agent.bench.jfr");
        jdk.jfr.Recording recording = jfr == null ? null : new jdk.jfr.Recording(jdk.jfr.Configuration.getConfiguration("profile"));
        if (recording != null) recording.start();
        try (TestServer s = TestServer.start(o)) {
            String join = s.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
            for (int i = 0; i < AGENTS; i++) {
                String node = "bench-" + i;
                agents.add(new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "--enable-native-access=ALL-UNNAMED", "-Xmx512m", System.getProperty("gpupool.agent.bench.jvmArg", "-Dx=y").replace("NODE", node),
                        "-cp", System.getProperty("java.class.path"),
                        AgentProcessMain.class.getName(), s.base, join, node, dir.resolve(node).toString(), GPUS + "xA100-80GB", "1000",
                        installed ? "as-installed" : "embedded")
                        .redirectErrorStream(true).redirectOutput(Path.of(System.getProperty("gpupool.agent.bench.logs", dir.toString())).resolve(node + ".log").toFile()).start());
            }
            TestServer.eventually(java.time.Duration.ofSeconds(120), "agents ready", () -> s.get("/api/v1/nodes", ADMIN).body().path("nodes").findValuesAsText("state")
                    .stream().filter("ready"::equals).count() == AGENTS);
            String token = s.tenantWithToken("bench", 1);
            System.out.printf(Locale.ROOT, "agent start bench: %d agents x %d fake A100, %d slots of 100 milli, jobs %s; %d cores; load average %s%n",
                    AGENTS, GPUS, SLOTS, installed ? "as nobody, in cgroups of their own" : "as the agents' account, unconfined", Runtime.getRuntime().availableProcessors(), loadAverage());
            List<BurstCost> bursts = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                long[] cpu0 = cpu(agents);
                long bench0 = THREADS.getCurrentThreadCpuTime();
                Map<String, Long> threads0 = threadTicks(agents);
                Result b = run(s, token, SLOTS, List.of("sleep", "600"), "burst-" + r);
                // "started" is the agent's spawn of the wrapper: the last wrappers may not have run their commands yet. A
                // job that could not start (its account cannot reach its directory, say) is "started" and gone.
                long[] jobs = jobProcessNanos(agents);
                for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30); jobs[2] != SLOTS; jobs = jobProcessNanos(agents)) {
                    if (System.nanoTime() > deadline) throw new AssertionError(jobs[2] + " of the burst's " + SLOTS + " commands run");
                    Thread.sleep(10);
                }
                long[] cpu1 = cpu(agents);
                long bench = THREADS.getCurrentThreadCpuTime() - bench0; // its polling of the store and of /proc
                Map<String, Long> threads1 = threadTicks(agents);
                BurstCost c = new BurstCost(serverPerJob(cpu1[1] - cpu0[1], b, bench, SLOTS), jit(threads0, threads1, "server", SLOTS),
                        perJob(cpu1[0] - cpu0[0], SLOTS), jit(threads0, threads1, "agents", SLOTS), jobs[0] / 1e6 / SLOTS, jobs[1] / 1e6 / SLOTS);
                System.out.printf(Locale.ROOT, "burst %d: %d jobs started in %.2f s = %.0f jobs/s (submissions took %.2f s, the server placed the last "
                                + "at %.2f s; %s); CPU per job: agents %.2f ms, server+client %.2f ms (server %.2f ms), the running jobs' wrappers "
                                + "%.2f ms and commands %.2f ms; load average %s%n",
                        r + 1, SLOTS, b.seconds(), SLOTS / b.seconds(), b.submitSeconds(), b.placedSeconds(), b.placementToSpawn(),
                        c.agents(), perJob(cpu1[1] - cpu0[1], SLOTS), c.server(), c.wrappers(), c.commands(), loadAverage());
                if (Boolean.getBoolean("gpupool.agent.bench.threads")) System.out.print(threadShares(threads0, threads1, SLOTS));
                bursts.add(c);
                cancelAll(s, token, b.ids());
                long[] cpu2 = cpu(agents);
                // the jobs' processes (the wrapper, the command, the stop) count once reaped
                System.out.printf(Locale.ROOT, "burst %d through its cancel: CPU per job: agents %.2f ms with the jobs' own processes%n",
                        r + 1, perJob(cpu2[0] - cpu0[0], SLOTS));
            }
            System.out.print(steadyState(bursts));
            long[] cpu0 = cpu(agents);
            long bench0 = THREADS.getCurrentThreadCpuTime();
            Result sus = run(s, token, sustained, List.of("sleep", "0.5"), "sustained");
            long[] cpu1 = cpu(agents);
            System.out.printf(Locale.ROOT, "sustained: %d jobs of 0.5 s through %d slots started in %.2f s = %.0f jobs/s; CPU per job: agents "
                            + "%.2f ms (with the jobs' own processes), server+client %.2f ms (server %.2f ms); load average %s%n",
                    sustained, SLOTS, sus.seconds(), sustained / sus.seconds(), perJob(cpu1[0] - cpu0[0], sustained),
                    perJob(cpu1[1] - cpu0[1], sustained), serverPerJob(cpu1[1] - cpu0[1], sus, THREADS.getCurrentThreadCpuTime() - bench0, sustained), loadAverage());
        } finally {
            if (recording != null) {
                recording.dump(Path.of(jfr, "server.jfr"));
                recording.close();
            }
            for (Process p : agents) p.destroy(); // SIGTERM: a profiling recording (-Dgpupool.agent.bench.jvmArg) is written at exit
            for (Process p : agents) if (!p.waitFor(20, TimeUnit.SECONDS)) p.destroyForcibly();
            killLeftovers(dir); // jobs outlive their agent by design: a bench that failed halfway leaves them running
        }
    }

    /** Kills every process whose command line names {@code dir} (the jobs' wrappers, the agents' fence keepers) and theirs. */
    private static void killLeftovers(Path dir) {
        ProcessHandle.allProcesses().filter(p -> p.info().arguments().map(a -> String.join(" ", a).contains(dir.toString())).orElse(false))
                .forEach(p -> {
                    p.descendants().forEach(ProcessHandle::destroyForcibly);
                    p.destroyForcibly();
                });
    }

    /** CPU per job of a burst, ms: the server's (and of it its JIT compilers'), the agents' JVMs' (their JIT's), the running
     *  jobs' wrappers' and their commands'. */
    private record BurstCost(double server, double serverJit, double agents, double agentsJit, double wrappers, double commands) {}

    /** clientCpuNanos: what the bench's 16 clients (their threads and the HTTP client's) used while submitting. */
    private record Result(List<String> ids, double seconds, double submitSeconds, double placedSeconds, String placementToSpawn,
                          long clientCpuNanos) {}

    /** Submits {@code n} jobs from 16 clients, waits until every one has been started by its agent. */
    private Result run(TestServer s, String token, int n, List<String> command, String name) throws Exception {
        List<String> ids = new ArrayList<>();
        long t0 = System.currentTimeMillis();
        long clientCpu;
        try (ExecutorService clients = Executors.newFixedThreadPool(16, r -> new Thread(r, "bench-client"))) {
            long clientCpu0 = clientCpuNanos();
            List<Future<String>> f = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int k = i;
                f.add(clients.submit(() -> s.post("/api/v1/jobs", token, Map.of("name", name + "-" + k, "numGpus", 1, "gpuMilli", 100,
                        "gpuMemMib", 1024, "command", command)).text("id")));
            }
            for (Future<String> x : f) ids.add(x.get());
            clientCpu = clientCpuNanos() - clientCpu0; // before the pool's threads end and take their counts with them
        }
        double submitted = (System.currentTimeMillis() - t0) / 1000.0;
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        while (true) {
            long[] st = started(s, name);
            if (st[0] >= n) return new Result(ids, (st[1] - t0) / 1000.0, submitted, (st[2] - t0) / 1000.0, placedToStarted(s, name), clientCpu);
            if (System.nanoTime() > deadline) throw new AssertionError("only " + st[0] + " of " + n + " started");
            Thread.sleep(50);
        }
    }

    /** How many attempts of the named jobs their agents started, and the latest start (agent clock, epoch ms). */
    private static long[] started(TestServer s, String name) throws Exception {
        try (Connection c = s.server.store().database().connection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT COUNT(*), COALESCE(MAX(a.started_ms), 0), COALESCE(MAX(a.assigned_ms), 0) FROM job_attempts a JOIN jobs j ON j.id = a.job_id "
                     + "WHERE a.started_ms IS NOT NULL AND j.spec LIKE '%\"name\":\"" + name + "-%'")) {
            rs.next();
            return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
        }
    }

    /** Per job, from its placement (assigned_ms, server clock) to its spawn (started_ms, the agent's clock, same host). */
    private static String placedToStarted(TestServer s, String name) throws Exception {
        List<Long> d = new ArrayList<>();
        try (Connection c = s.server.store().database().connection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT a.started_ms - a.assigned_ms FROM job_attempts a JOIN jobs j ON j.id = a.job_id "
                     + "WHERE a.started_ms IS NOT NULL AND j.spec LIKE '%\"name\":\"" + name + "-%' ORDER BY 1")) {
            while (rs.next()) d.add(rs.getLong(1));
        }
        return String.format(Locale.ROOT, "placement to spawn per job: median %d ms, p90 %d ms, max %d ms",
                d.get(d.size() / 2), d.get(d.size() * 9 / 10), d.getLast());
    }

    private static void cancelAll(TestServer s, String token, List<String> ids) throws Exception {
        try (ExecutorService clients = Executors.newFixedThreadPool(16)) {
            for (String id : ids) clients.submit(() -> s.delete("/api/v1/jobs/" + id, token));
        }
        TestServer.eventually("the pool is empty", () -> s.get("/api/v1/pool", ADMIN).body().path("runningCount").asInt() == 0);
        Thread.sleep(3000); // the agents stop the processes (SIGTERM) and report
    }

    /**
     * CPU clock ticks used so far by the agent processes (with their reaped children: the jobs' own processes)
     * and by this JVM (the server and the bench's clients).
     */
    private static long[] cpu(List<Process> agents) throws Exception {
        long a = 0;
        for (Process p : agents) a += ticks(Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat")), true);
        return new long[] {a, ticks(Files.readString(Path.of("/proc/self/stat")), false)};
    }

    /**
     * CPU used so far by the agents' running jobs, in nanoseconds: their wrappers (the agents' child processes: the
     * wrapper's exec, its work and its vfork) and the wrappers' children (the command: its exec and what it ran since).
     * From /proc/PID/schedstat: /proc/PID/stat counts in 10 ms ticks and shows a process that ran 8 ms as 0. The third
     * number: how many commands run.
     */
    private static long[] jobProcessNanos(List<Process> agents) throws Exception {
        Map<Long, List<long[]>> byParent = new java.util.HashMap<>(); // ppid -> (pid, ns)
        try (var procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).toList()) {
                String stat, sched;
                try {
                    stat = Files.readString(p.resolve("stat"));
                    sched = Files.readString(p.resolve("schedstat"));
                } catch (java.io.IOException ended) {
                    continue;
                }
                byParent.computeIfAbsent(Long.parseLong(statFields(stat)[1]), k -> new ArrayList<>())
                        .add(new long[] {Long.parseLong(p.getFileName().toString()), Long.parseLong(sched.split(" ")[0])});
            }
        }
        long wrappers = 0, commands = 0, running = 0;
        for (Process a : agents) {
            for (long[] w : byParent.getOrDefault(a.pid(), List.of())) {
                if (fenceKeeper(w[0])) continue; // the agent's other child (with its sleep), not a job
                wrappers += w[1];
                for (long[] c : byParent.getOrDefault(w[0], List.of())) {
                    commands += c[1];
                    running++;
                }
            }
        }
        return new long[] {wrappers, commands, running};
    }

    private static boolean fenceKeeper(long pid) {
        try {
            return Files.readString(Path.of("/proc", Long.toString(pid), "cmdline")).contains("gpupool fence keeper");
        } catch (java.io.IOException ended) {
            return false;
        }
    }

    /**
     * CPU ticks so far per kind of thread ("server: ForkJoinPool-N-worker-", "agents: C2 CompilerThread"), from
     * /proc/PID/task: digits dropped from the names so a pool's threads add up. A thread that ended between two
     * readings takes its ticks with it (the bench's clients do; they are not the server's).
     */
    private static Map<String, Long> threadTicks(List<Process> agents) throws Exception {
        Map<String, Long> t = new java.util.TreeMap<>();
        addThreadTicks(t, "server", Path.of("/proc/self/task"));
        for (Process p : agents) addThreadTicks(t, "agents", Path.of("/proc", Long.toString(p.pid()), "task"));
        return t;
    }

    private static void addThreadTicks(Map<String, Long> into, String who, Path tasks) throws Exception {
        try (var ids = Files.list(tasks)) {
            for (Path task : ids.toList()) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (java.io.IOException ended) {
                    continue;
                }
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replaceAll("[0-9]+", "N");
                into.merge(who + ": " + name, ticks(stat, false), Long::sum);
            }
        }
    }

    /** CPU per job of one side's JIT compiler threads ("server" or "agents") between two readings of {@link #threadTicks}. */
    private static double jit(Map<String, Long> before, Map<String, Long> after, String who, int jobs) {
        long t = 0;
        for (var e : after.entrySet()) {
            if (e.getKey().startsWith(who + ": ") && e.getKey().contains("CompilerThre")) t += e.getValue() - before.getOrDefault(e.getKey(), 0L);
        }
        return perJob(t, jobs);
    }

    /**
     * The means over the second half of the bursts (the first ones are the JIT's warm-up): what a job's start costs a
     * server and agents that have run for a while, with and without what their JIT compilers still did meanwhile.
     * Per burst: server, its JIT, agents' JVMs, their JIT, wrappers, commands (ms per job).
     */
    private static String steadyState(List<BurstCost> bursts) {
        int from = bursts.size() / 2;
        List<BurstCost> late = bursts.subList(from, bursts.size());
        double server = mean(late, BurstCost::server), agents = mean(late, BurstCost::agents), wrappers = mean(late, BurstCost::wrappers);
        double serverJit = mean(late, BurstCost::serverJit), agentsJit = mean(late, BurstCost::agentsJit);
        double total = server + agents + wrappers;
        return String.format(Locale.ROOT, "steady state (bursts %d-%d, mean CPU per job): server %.2f ms (its JIT compilers %.2f), agents' JVMs %.2f ms "
                        + "(JIT %.2f), job wrappers %.2f ms: a start costs %.2f ms, %.2f ms without the JIT's compilations; the commands' own "
                        + "processes (their exec) %.2f ms%n",
                from + 1, bursts.size(), server, serverJit, agents, agentsJit, wrappers, total, total - serverJit - agentsJit,
                mean(late, BurstCost::commands));
    }

    private static double mean(List<BurstCost> bursts, java.util.function.ToDoubleFunction<BurstCost> part) {
        return bursts.stream().mapToDouble(part).average().orElse(Double.NaN);
    }

    /** The threads that used at least 0.05 ms per job between two readings of {@link #threadTicks}, most first. */
    private static String threadShares(Map<String, Long> before, Map<String, Long> after, int jobs) {
        StringBuilder out = new StringBuilder("  CPU per job by thread:");
        after.entrySet().stream()
                .map(e -> Map.entry(e.getKey(), perJob(e.getValue() - before.getOrDefault(e.getKey(), 0L), jobs)))
                .filter(e -> e.getValue() >= 0.05).sorted(Map.Entry.<String, Double>comparingByValue().reversed())
                .forEach(e -> out.append(String.format(Locale.ROOT, "%n    %-48s %.2f ms", e.getKey(), e.getValue())));
        return out.append(System.lineSeparator()).toString();
    }

    /** The fields of a /proc/PID/stat line after the command name (which may hold spaces): [0] is field 3, the state. */
    private static String[] statFields(String stat) {
        return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    }

    private static long ticks(String stat, boolean children) {
        String[] f = statFields(stat);
        // fields 14-17 of /proc/PID/stat: utime stime cutime cstime (f[0] is field 3)
        long t = Long.parseLong(f[11]) + Long.parseLong(f[12]);
        return children ? t + Long.parseLong(f[13]) + Long.parseLong(f[14]) : t;
    }

    /**
     * CPU used so far by the threads that belong to the bench's clients, not to the server: the client pool's and
     * the JDK HTTP client's (its selector and workers). The server's own threads are Jetty's (virtual threads on
     * the common carriers), the engine loop, the store writer; GC and the JIT are counted to the server.
     */
    private static long clientCpuNanos() {
        long sum = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("bench-client") || t.getName().startsWith("HttpClient-")) {
                long c = THREADS.getThreadCpuTime(t.threadId());
                if (c > 0) sum += c;
            }
        }
        return sum;
    }

    /** The JVM's CPU per job less its clients' and the bench thread's (its polling): the server's share. */
    private static double serverPerJob(long jvmTicks, Result r, long benchThreadNanos, int jobs) {
        return (jvmTicks * 10.0 - r.clientCpuNanos() / 1e6 - benchThreadNanos / 1e6) / jobs;
    }

    private static double perJob(long ticks, int jobs) {
        return ticks * 1000.0 / 100 / jobs; // USER_HZ is 100 on Linux
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).substring(0, 14).trim();
        } catch (Exception e) {
            return String.format(Locale.ROOT, "%.2f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        }
    }
}
