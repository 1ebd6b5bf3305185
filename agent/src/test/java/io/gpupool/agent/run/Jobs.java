package io.gpupool.agent.run;

import io.gpupool.agent.protocol.GrantedGpu;
import io.gpupool.agent.protocol.JobLaunch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Small helpers to write job launches and wait for them in tests. */
final class Jobs {

    private Jobs() {
    }

    /**
     * The native wrapper installed under {@code workDir}; empty where the build had no C compiler. CI has one (it
     * installs gcc), so there a missing native wrapper fails the test instead.
     */
    static Optional<NativeWrapper> nativeWrapper(Path workDir) {
        NativeWrapper.Installed n = NativeWrapper.install(workDir);
        if (n.wrapper() == null && System.getenv("GPUPOOL_CI") != null) throw new AssertionError("the native wrapper " + n.whyNot());
        return Optional.ofNullable(n.wrapper());
    }

    /** The wrappers a runner with work directory {@code workDir} can use on this machine: the native one (installed there) and the shell one. */
    static List<JobWrapper> wrappers(Path workDir) {
        JobWrapper shell = ShellWrapper.onThisMachine("under test");
        return nativeWrapper(workDir).<List<JobWrapper>>map(n -> List.of(n, shell)).orElse(List.of(shell));
    }

    /** A job that runs {@code script} under sh -c. */
    static JobLaunch sh(String id, String script, GrantedGpu... gpus) {
        return new JobLaunch(id, 0, List.of("sh", "-c", script), Map.of(), null, List.of(gpus));
    }

    static JobEnd await(RunningJob job) throws Exception {
        return job.end().get(20, TimeUnit.SECONDS);
    }

    static RunningJob started(JobRunner.StartResult r) {
        if (r instanceof JobRunner.StartResult.Started s) return s.job();
        throw new AssertionError("expected the job to start, got " + r);
    }

    /** Polls {@code condition} every 20 ms for up to {@code limit}. */
    static boolean eventually(Duration limit, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) return true;
            Thread.sleep(20);
        }
        return condition.getAsBoolean();
    }

    /**
     * Whether the job's own command printed {@code text}: its shell has then replaced the wrapper's fork, which still
     * had the wrapper's TERM trap (a SIGTERM in that moment is ignored, and the job runs on).
     */
    static boolean printed(RunningJob job, String text) {
        try {
            return Files.readString(job.directory().stdout()).contains(text);
        } catch (IOException e) {
            return false;
        }
    }
}
