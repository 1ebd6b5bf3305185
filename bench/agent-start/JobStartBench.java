import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.run.JobEnd;
import io.gpupool.agent.run.JobRunner;
import io.gpupool.agent.run.RunnerConfig;
import io.gpupool.agent.run.RunningJob;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * CPU per job start of the node agent's JobRunner (issue 16): the agent's JVM (every thread: the start path, the reaping,
 * recording the end, JIT and GC) plus every process of the job's chain (the wrapper and the command, reaped and so counted
 * in RUSAGE_CHILDREN), from {@code start} until the job's end is recorded. Uses only JobRunner's public API, so the same
 * file measures main's runner (commit e19ce7f) and a newer one: bench/job-start.sh builds either and runs this.
 *
 * <p>Usage: JobStartBench WORKDIR JOBS ROUNDS ACCOUNT(none|name) COMMAND... Each round starts JOBS jobs back to back
 * from one thread (as the agent's reconciler starts a batch), then waits until every end is recorded; a first round of
 * the same size warms the JIT and is not reported. Then JOBS jobs one after the other (start, wait for the end).
 */
public final class JobStartBench {

    private static final MethodHandle GETRUSAGE = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("getrusage").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    private static final int RUSAGE_SELF = 0, RUSAGE_CHILDREN = -1;

    /** CPU seconds (user + sys) of this process's threads and of its reaped children. */
    record Cpu(double selfUser, double selfSys, double childUser, double childSys) {
        static Cpu now() throws Throwable {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment s = a.allocate(144), c = a.allocate(144);
                if ((int) GETRUSAGE.invokeExact(RUSAGE_SELF, s) != 0 || (int) GETRUSAGE.invokeExact(RUSAGE_CHILDREN, c) != 0) {
                    throw new IllegalStateException("getrusage failed");
                }
                return new Cpu(tv(s, 0), tv(s, 16), tv(c, 0), tv(c, 16));
            }
        }

        private static double tv(MemorySegment r, long off) {
            return r.get(JAVA_LONG, off) + r.get(JAVA_LONG, off + 8) / 1e6;
        }

        Cpu minus(Cpu o) {
            return new Cpu(selfUser - o.selfUser, selfSys - o.selfSys, childUser - o.childUser, childSys - o.childSys);
        }

        double self() {
            return selfUser + selfSys;
        }

        double children() {
            return childUser + childSys;
        }
    }

    public static void main(String[] args) throws Throwable {
        Path work = Path.of(args[0]);
        int jobs = Integer.parseInt(args[1]);
        int rounds = Integer.parseInt(args[2]);
        String account = args[3].equals("none") ? null : args[3];
        List<String> command = List.of(args).subList(4, args.length);
        Files.createDirectories(work);
        // a job under its own account enters its work directory through this one
        Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwx--x--x"));
        RunnerConfig config = RunnerConfig.defaults(work).withAccounts(account, false);
        String wrapper = System.getProperty("gpupool.bench.wrapper");
        if (wrapper != null) {
            // by reflection: agents before the choice existed (--ref) compile this bench too, and run it without the property
            Class<?> choice = Class.forName("io.gpupool.agent.run.RunnerConfig$WrapperChoice");
            Object value = choice.getMethod("valueOf", String.class).invoke(null, wrapper.toUpperCase(java.util.Locale.ROOT));
            config = (RunnerConfig) RunnerConfig.class.getMethod("withWrapper", choice).invoke(config, value);
        }
        JobRunner.Listener quiet = new JobRunner.Listener() {
            public void started(RunningJob job) {}

            public void ended(JobLaunch launch, JobEnd end) {}

            public void warning(RunningJob job, String message) {}
        };
        System.out.printf("job start bench: %d jobs per round, command %s, account %s; %d cores; load average %s%n",
                jobs, command, account == null ? "(the agent's)" : account, Runtime.getRuntime().availableProcessors(), loadAverage());
        // -Dgpupool.bench.confine=true: cgroups per attempt, as a root `gpupool agent` makes them (no GPU: no device rule)
        boolean confine = Boolean.getBoolean("gpupool.bench.confine");
        io.gpupool.agent.confine.Confinement confinement = confine
                ? io.gpupool.agent.confine.Confinement.start(io.gpupool.agent.confine.Confinement.Settings.on(), "jobstartbench", 0)
                : io.gpupool.agent.confine.Confinement.off("not asked (-Dgpupool.bench.confine=true)", io.gpupool.agent.confine.DeviceNodes.system());
        System.out.println("confinement: " + confinement);
        JobRunner runner = new JobRunner(config, List.of(), quiet, confinement);
        System.out.println("job start: " + runner.spawnMethod());
        int next = 0;
        for (int r = 0; r <= rounds; r++) {
            List<RunningJob> started = new ArrayList<>(jobs);
            Cpu before = Cpu.now();
            long t0 = System.nanoTime();
            for (int i = 0; i < jobs; i++) started.add(start(runner, "b" + next++, command));
            long submitted = System.nanoTime();
            int failed = 0;
            for (RunningJob j : started) if (!succeeded(j)) failed++;
            long t1 = System.nanoTime();
            Cpu used = Cpu.now().minus(before);
            if (r == 0) continue; // JIT warm-up
            report("burst " + r, jobs, used, t1 - t0, failed);
            System.out.printf("    (the %d starts returned in %.0f ms)%n", jobs, (submitted - t0) / 1e6);
        }
        Cpu before = Cpu.now();
        long t0 = System.nanoTime();
        int failed = 0;
        for (int i = 0; i < jobs; i++) {
            if (!succeeded(start(runner, "s" + next++, command))) failed++;
        }
        report("one at a time", jobs, Cpu.now().minus(before), System.nanoTime() - t0, failed);
        runner.close();
        System.out.printf("load average at the end %s%n", loadAverage());
    }

    private static String firstFailure;

    /** Whether the job ended with exit code 0; the first that did not is printed once. */
    private static boolean succeeded(RunningJob job) throws Exception {
        JobEnd end = job.end().get(60, TimeUnit.SECONDS);
        if (end.exitCode() != null && end.exitCode() == 0) return true;
        if (firstFailure == null) {
            firstFailure = end.message();
            System.out.println("    first failure: " + end.phase() + ", " + end.message() + "; stderr: "
                    + Files.readString(job.directory().stderr()).strip());
        }
        return false;
    }

    private static RunningJob start(JobRunner runner, String id, List<String> command) {
        JobRunner.StartResult r = runner.start(new JobLaunch(id, 0, command, Map.of(), null, List.of()));
        if (r instanceof JobRunner.StartResult.Started s) return s.job();
        throw new IllegalStateException("job " + id + " did not start: " + r);
    }

    private static void report(String what, int jobs, Cpu used, long wallNanos, int failed) {
        double wall = wallNanos / 1e9;
        System.out.printf("  %-14s %6.2f ms CPU per job (agent JVM %.2f [user %.2f sys %.2f], job processes %.2f [user %.2f sys %.2f]); "
                        + "%.0f jobs/s (%d in %.2f s wall, %.2f ms each)%s%n",
                what, 1000 * (used.self() + used.children()) / jobs, 1000 * used.self() / jobs, 1000 * used.selfUser() / jobs,
                1000 * used.selfSys() / jobs, 1000 * used.children() / jobs, 1000 * used.childUser() / jobs, 1000 * used.childSys() / jobs,
                jobs / wall, jobs, wall, 1000 * wall / jobs, failed == 0 ? "" : "; " + failed + " did not succeed");
    }

    private static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (Exception e) {
            return "(unknown)";
        }
    }
}
