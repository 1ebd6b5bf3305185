package io.gpupool.sim.history;

import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;
import io.gpupool.sim.trace.TraceContext;
import io.gpupool.sim.trace.TraceFile;
import io.gpupool.sim.trace.TraceJob;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A pool's history as a gpupool trace CSV (docs/contracts.md, "History columns"): every job's submission, shape,
 * models, tenant and run time in the trace's own columns, which {@code simulate --trace} replays as any trace, and what
 * happened on the service in {@code recorded_*} columns, which only the comparison with the record reads.
 * Times are seconds from the earliest submission of the file, to the millisecond; {@code submitted_at} says when that
 * was.
 */
public final class HistoryCsv {
    /** The columns written, in order: the trace's, then the record's. */
    public static final List<String> COLUMNS = List.of("job_id", "submit_time", "duration", "num_gpus", "gpu_milli", "gpu_mem_mib", "gpu_type",
            "tenant", "user", "priority", "name", "replicas", "preemptible", "require_nvlink", "cpu_milli", "host_mem_mib", "estimate", "time_limit",
            "array_id", "array_cap", "submitted_at", "recorded_state", "recorded_start", "recorded_end", "recorded_wait", "recorded_runs");

    private HistoryCsv() {}

    /**
     * The CSV of these jobs (their times counted from {@code originMs}, the epoch milliseconds of time 0), in the
     * order given.
     */
    public static String write(List<RecordedJob> jobs, long originMs) {
        StringBuilder sb = new StringBuilder(String.join(",", COLUMNS)).append('\n');
        for (RecordedJob r : jobs) {
            JobSpec s = r.spec();
            TraceJob.Workflow w = r.job().workflow();
            List<String> cells = new ArrayList<>(COLUMNS.size());
            cells.add(cell(s.id()));
            cells.add(seconds(s.submitTimeMs()));
            cells.add(seconds(r.job().durationMs()));
            cells.add(Integer.toString(s.totalGpus()));
            cells.add(Integer.toString(s.share().milli()));
            cells.add(Long.toString(s.share().memoryMib()));
            cells.add(String.join("|", new TreeSet<>(s.allowedModels())));
            cells.add(cell(s.tenant()));
            cells.add(cell(s.user()));
            cells.add(Integer.toString(s.priority()));
            cells.add(cell(s.name()));
            cells.add(Integer.toString(s.shape().replicas()));
            cells.add(Boolean.toString(s.preemptible()));
            cells.add(Boolean.toString(s.requireNvlink()));
            cells.add(Long.toString(s.host().cpuMilli()));
            cells.add(Long.toString(s.host().memoryMib()));
            cells.add(s.runtimeEstimateMs().isPresent() ? seconds(s.runtimeEstimateMs().getAsLong()) : "");
            cells.add(s.timeLimitMs().isPresent() ? seconds(s.timeLimitMs().getAsLong()) : "");
            cells.add(w == null || w.arrayId() == null ? "" : cell(w.arrayId()));
            cells.add(w == null || w.arrayCap() == 0 ? "" : Integer.toString(w.arrayCap()));
            cells.add(Instant.ofEpochMilli(originMs + s.submitTimeMs()).toString());
            cells.add(cell(r.state()));
            cells.add(seconds(r.firstStartMs()));
            cells.add(seconds(r.endMs()));
            cells.add(seconds(r.waitMs()));
            cells.add(runs(r.runs()));
            sb.append(String.join(",", cells)).append('\n');
        }
        return sb.toString();
    }

    /** {@code START-END@NODE:GPU+GPU/NODE:GPU|START-END@...}: node names hold none of ':', '+', '/', '|', '@'. */
    static String runs(List<RecordedJob.Run> runs) {
        List<String> out = new ArrayList<>();
        for (RecordedJob.Run r : runs) {
            List<String> nodes = new ArrayList<>();
            for (RecordedJob.NodeGpus n : r.gpus()) nodes.add(n.node() + ":" + String.join("+", n.gpus().stream().map(String::valueOf).toList()));
            out.add(seconds(r.startMs()) + "-" + seconds(r.endMs()) + "@" + String.join("/", nodes));
        }
        return String.join("|", out);
    }

    /**
     * Reads a history CSV: its jobs as the gpupool trace format maps them, with their recorded runs. A bad row stops
     * the read with file:line, the column and the rule; a file without the record's columns is refused at line 1.
     */
    public static List<RecordedJob> read(Path file, TraceContext context) {
        if (!Files.isRegularFile(file)) throw new SpecException("--history", "history", "no such file: " + file);
        HistoryFormat format = new HistoryFormat();
        TraceFile trace = TraceFile.open(file, format, context, false);
        Map<String, HistoryFormat.Recorded> recorded = format.recorded();
        List<RecordedJob> out = new ArrayList<>();
        for (TraceJob j : trace.toList()) {
            HistoryFormat.Recorded r = recorded.get(j.spec().id());
            try {
                out.add(new RecordedJob(j, r.state(), r.runs()));
            } catch (SpecException e) {
                throw new SpecException(r.where(), e.field(), e.rule());
            }
        }
        return out;
    }

    /** Milliseconds as seconds with up to three decimals, no exponent. */
    static String seconds(long ms) {
        return BigDecimal.valueOf(ms, 3).stripTrailingZeros().toPlainString();
    }

    /** A text cell: quoted when it holds a comma or a quote; a line break (which a trace row cannot hold) becomes a space. */
    static String cell(String v) {
        String s = v.replace('\r', ' ').replace('\n', ' ');
        return s.indexOf(',') >= 0 || s.indexOf('"') >= 0 ? '"' + s.replace("\"", "\"\"") + '"' : s;
    }
}
