package io.gpupool.predict.runtime;

import io.gpupool.sim.trace.PhillyFormat;
import io.gpupool.sim.trace.Trace;
import io.gpupool.sim.trace.TraceContext;
import io.gpupool.sim.trace.TraceFile;
import io.gpupool.sim.trace.TraceJob;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The history model on the real Philly table: in {@code $GPUPOOL_TRACES/philly/philly_jobs.csv}, else in
 * {@code ../shared/traces} beside the checkout; skipped, with a line naming the path, where it is absent (docs/traces.md,
 * "Getting the real traces").
 */
class PhillyHistoryTest {

    private static Path philly() {
        String env = System.getenv("GPUPOOL_TRACES");
        Path root = env != null && !env.isBlank() ? Path.of(env)
                : Path.of(System.getProperty("gpupool.repo.root", ".")).resolve("../shared/traces");
        Path p = root.resolve("philly/philly_jobs.csv").toAbsolutePath().normalize();
        if (!Files.isRegularFile(p)) {
            String why = "skipped: " + p + " not found; download the public traces (docs/traces.md, \"Getting the real traces\") and set "
                    + "GPUPOOL_TRACES to their folder (default: ../shared/traces beside the checkout)";
            System.err.println("gpupool: " + why);
            Assumptions.abort(why);
        }
        return p;
    }

    @Test
    void recentRunsOfTheSameTenantAndGpuCountBeatTheGlobalMedianOnline() {
        Path philly = philly();
        List<FinishedJob> jobs = new ArrayList<>();
        try (Trace.Cursor c = TraceFile.open(philly, new PhillyFormat(), TraceContext.standard(), false).open()) {
            while (c.hasNext() && jobs.size() < 20_000) {
                TraceJob t = c.next();
                jobs.add(new FinishedJob(t.spec(), t.durationMs()));
            }
        }
        long[] actual = jobs.stream().mapToLong(FinishedJob::runMs).toArray();
        // Philly has no user or job name: only the virtual cluster (tenant) and the GPU count say what a job is.
        PredictionError global = PredictionError.of(HistoryReplay.replay(HistoryPredictor.globalMedian(3_600_000L), jobs), actual);
        PredictionError history = PredictionError.of(HistoryReplay.replay(HistoryPredictor.standard(3_600_000L), jobs), actual);
        assertThat(history.medianAbsLogError()).as(history + " vs " + global).isLessThan(global.medianAbsLogError() * 0.6);
        assertThat(history.within2x()).as(history + " vs " + global).isGreaterThan(global.within2x() + 0.15);
    }
}
