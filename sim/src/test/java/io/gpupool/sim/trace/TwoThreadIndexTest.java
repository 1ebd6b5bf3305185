package io.gpupool.sim.trace;

import io.gpupool.model.SpecException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A trace of 1 MB or more is indexed by two threads, one half each: the jobs, their order, the counts and every error
 * must be what one thread makes of the same file (the same format told it may not split). Philly ids are
 * {@code philly-LINE}, so the second half's line numbers are checked with every job.
 */
class TwoThreadIndexTest {
    private static final int ROWS = 80_000;
    @TempDir static Path dir;

    @BeforeAll
    static void twoProcessors() {
        assumeTrue(Runtime.getRuntime().availableProcessors() >= 2, "the index splits only with a second processor");
    }

    @Test
    void phillyRowsGiveTheSameJobsInTheSameOrderAsOneThread() throws IOException {
        Path p = write("philly.csv", "timestamp,duration,num_gpus,gpu_time,cluster", i -> philly(i, "1"));
        assertSameAsOneThread(p, new PhillyFormat(), false);
    }

    @Test
    void skippedRowsInBothHalvesAreCountedAndToldInFileOrder() throws IOException {
        // a bad GPU count every 7,001 rows: some in each half
        Path p = write("bad.csv", "timestamp,duration,num_gpus,gpu_time,cluster", i -> philly(i, i % 7001 == 3000 ? "x" : "2"));
        TraceStats stats = assertSameAsOneThread(p, new PhillyFormat(), true);
        assertThat(stats.skippedRows()).isEqualTo(11);
        assertThat(stats.firstSkipped()).hasSize(5).first().asString().contains("bad.csv:3002");
    }

    @Test
    void theFirstBadRowOfTheFileIsTheOneReported() throws IOException {
        int late = ROWS * 3 / 4, early = ROWS / 4;
        Path onlyLate = write("late.csv", "timestamp,duration,num_gpus,gpu_time,cluster", i -> philly(i, i == late ? "-1" : "1"));
        assertThatThrownBy(() -> TraceFile.open(onlyLate, new PhillyFormat(), TraceContext.standard(), false))
                .isInstanceOf(SpecException.class).hasMessageContaining("late.csv:" + (late + 2));
        Path both = write("both.csv", "timestamp,duration,num_gpus,gpu_time,cluster", i -> philly(i, i == late || i == early ? "-1" : "1"));
        assertThatThrownBy(() -> TraceFile.open(both, new PhillyFormat(), TraceContext.standard(), false))
                .isInstanceOf(SpecException.class).hasMessageContaining("both.csv:" + (early + 2));
    }

    @Test
    void duplicateIdsAcrossTheHalvesAreFound() throws IOException {
        // the last row repeats the first row's id
        Path p = write("dup.csv", "job_id,submit_time,duration,num_gpus", i -> (i == ROWS - 1 ? "job-0" : "job-" + i) + "," + (i % 977) + ",10,1");
        assertThatThrownBy(() -> TraceFile.open(p, new GpupoolCsvFormat(), TraceContext.standard(), false))
                .isInstanceOf(SpecException.class).hasMessageContaining("duplicate job id 'job-0' (first on line 2)");
        assertSameAsOneThread(p, new GpupoolCsvFormat(), true);
    }

    @Test
    void openbRowsLeftOutAreCountedByReason() throws IOException {
        // every third pod never ran on a GPU (no scheduled_time), every fifth asks for none
        Path p = write("openb.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time",
                i -> "pod-" + i + ",1000,2048," + (i % 5 == 0 ? 0 : 1) + ",1000,,LS,Running," + (i % 313) + "," + (i % 313 + 50) + "," + (i % 3 == 0 ? "" : String.valueOf(i % 313 + 5)));
        TraceStats stats = assertSameAsOneThread(p, new OpenbFormat(), false);
        assertThat(stats.ignored()).hasSize(2);
    }

    /** Opens the file as it is and as one thread indexes it: same stats, same jobs in the same order. */
    private static TraceStats assertSameAsOneThread(Path p, TraceFormat format, boolean skipBadRows) throws IOException {
        assertThat(Files.size(p)).isGreaterThan(TraceFile.PARALLEL_INDEX_BYTES + 4096);
        TraceFile halves = TraceFile.open(p, format, TraceContext.standard(), skipBadRows);
        TraceFile one = TraceFile.open(p, new OneThread(format), TraceContext.standard(), skipBadRows);
        assertThat(halves.stats()).isEqualTo(one.stats());
        List<TraceJob> a = halves.toList(), b = one.toList();
        assertThat(a).hasSize(b.size()).hasSizeGreaterThan(ROWS / 2);
        assertThat(a).isEqualTo(b);
        return halves.stats();
    }

    private static String philly(int i, String gpus) {
        // unsorted submit times over two months, so the index sorts
        SplittableRandom r = new SplittableRandom(i);
        return String.format("2017-%02d-%02d %02d:%02d:%02d,%d.0,%s,1.0,vc%d", 10 + r.nextInt(2), 1 + r.nextInt(28), r.nextInt(24),
                r.nextInt(60), r.nextInt(60), 1 + r.nextInt(5000), gpus, r.nextInt(7));
    }

    private static Path write(String name, String header, IntFunction<String> row) throws IOException {
        List<String> lines = new ArrayList<>(ROWS + 1);
        lines.add(header);
        for (int i = 0; i < ROWS; i++) lines.add(row.apply(i));
        return Files.write(dir.resolve(name), lines);
    }

    /** The same format, said not to split its rows: indexed by one thread. */
    private record OneThread(TraceFormat format) implements TraceFormat {
        @Override public String name() { return format.name(); }
        @Override public String description() { return format.description(); }
        @Override public RowMapper bind(Columns columns, TraceContext context) { return format.bind(columns, context); }
    }
}
