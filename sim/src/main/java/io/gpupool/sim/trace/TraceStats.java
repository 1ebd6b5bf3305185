package io.gpupool.sim.trace;

import java.util.List;
import java.util.Map;

/**
 * What reading a trace found: data rows, jobs kept, malformed rows skipped ({@code --skip-bad-rows}; the
 * first few messages kept), and valid rows that are not GPU jobs, counted by reason.
 */
public record TraceStats(long rows, long jobs, long skippedRows, List<String> firstSkipped, Map<String, Long> ignored) {
    public TraceStats {
        firstSkipped = List.copyOf(firstSkipped);
        ignored = Map.copyOf(ignored);
    }

    public static TraceStats of(long jobs) {
        return new TraceStats(jobs, jobs, 0, List.of(), Map.of());
    }

    public long ignoredRows() {
        return ignored.values().stream().mapToLong(Long::longValue).sum();
    }
}
