package io.gpupool.sim.history;

import io.gpupool.sim.trace.Columns;
import io.gpupool.sim.trace.GpupoolCsvFormat;
import io.gpupool.sim.trace.Row;
import io.gpupool.sim.trace.TraceContext;
import io.gpupool.sim.trace.TraceFormat;
import io.gpupool.sim.trace.TraceJob;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The gpupool trace format plus the history's {@code recorded_state} and {@code recorded_runs}: each row maps to its job
 * exactly as {@link GpupoolCsvFormat} maps it, and its record is checked and kept by job id. {@link io.gpupool.sim.trace.TraceFile}
 * maps every row once while indexing, so once the file is open every job's record is known.
 */
final class HistoryFormat implements TraceFormat {
    private static final Pattern RUN = Pattern.compile("(\\d{1,13}(?:\\.\\d{1,3})?)-(\\d{1,13}(?:\\.\\d{1,3})?)@(.+)");
    private static final Pattern NODE = Pattern.compile("([A-Za-z0-9][A-Za-z0-9._-]{0,252}):(\\d{1,2}(?:\\+\\d{1,2})*)");

    /** A row's record, and where it is (for errors found when the job and its record are put together). */
    record Recorded(String where, String state, List<RecordedJob.Run> runs) {}

    private final GpupoolCsvFormat jobs = new GpupoolCsvFormat();
    private final Map<String, Recorded> recorded = new ConcurrentHashMap<>();

    @Override public String name() { return "gpupool-history"; }

    @Override
    public String description() {
        return "gpupool history CSV (gpupool history export): the gpupool trace columns plus recorded_state and recorded_runs";
    }

    Map<String, Recorded> recorded() { return recorded; }

    @Override
    public RowMapper bind(Columns columns, TraceContext context) {
        columns.require("recorded_state", "recorded_runs");
        RowMapper mapper = jobs.bind(columns, context);
        return (row, shiftMs) -> {
            TraceJob job = mapper.map(row, shiftMs);
            recorded.put(job.spec().id(), new Recorded(row.where(), state(row), runs(row, shiftMs)));
            return job;
        };
    }

    private static String state(Row row) {
        String s = row.required("recorded_state");
        if (!s.matches("[A-Z_]{1,16}")) throw row.error("recorded_state", "must be an end state such as SUCCEEDED, FAILED, CANCELLED or TIMEOUT, got '" + s + "'");
        return s;
    }

    /** {@code START-END@NODE:GPU+GPU/NODE:GPU|...} (seconds, as submit_time). */
    private static List<RecordedJob.Run> runs(Row row, long shiftMs) {
        List<RecordedJob.Run> out = new ArrayList<>();
        String cell = row.required("recorded_runs");
        for (String run : cell.split("\\|", -1)) {
            Matcher m = RUN.matcher(run.trim());
            if (!m.matches()) throw row.error("recorded_runs", "each run is START-END@NODE:GPU[+GPU...][/NODE:GPU...] (seconds), got '" + clip(run) + "'");
            long start = Math.round(Double.parseDouble(m.group(1)) * 1000) - shiftMs;
            long end = Math.round(Double.parseDouble(m.group(2)) * 1000) - shiftMs;
            if (end < start) throw row.error("recorded_runs", "run '" + clip(run) + "' ends before it starts");
            List<RecordedJob.NodeGpus> nodes = new ArrayList<>();
            for (String n : m.group(3).split("/", -1)) {
                Matcher nm = NODE.matcher(n);
                if (!nm.matches()) throw row.error("recorded_runs", "GPUs of a node are NODE:GPU[+GPU...], got '" + clip(n) + "'");
                List<Integer> gpus = new ArrayList<>();
                for (String g : nm.group(2).split("\\+")) gpus.add(Integer.parseInt(g));
                nodes.add(new RecordedJob.NodeGpus(nm.group(1), gpus));
            }
            out.add(new RecordedJob.Run(start, end, nodes));
        }
        return out;
    }

    private static String clip(String s) {
        return s.length() > 60 ? s.substring(0, 60) + "..." : s;
    }
}
