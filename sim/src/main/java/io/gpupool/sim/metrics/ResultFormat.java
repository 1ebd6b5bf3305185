package io.gpupool.sim.metrics;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** Renders the results of several policies side by side: console table, JSON array, CSV. */
public final class ResultFormat {
    /** Made on first use: a table or CSV run does not load Jackson's databind (~0.2 s of a short run's start). */
    private static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    }

    private ResultFormat() {}

    /** A JSON array, one object per policy: the summary fields, then {@code extra} (trace facts), then tenants. */
    public static String json(List<SimulationResult> results, Map<String, Object> extra) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (SimulationResult r : results) {
            Map<String, Object> m = new LinkedHashMap<>(r.summary());
            m.put("trace", r.trace());
            m.putAll(extra);
            m.put("tenants", r.tenantRows());
            rows.add(m);
        }
        return toJson(rows);
    }

    public static String toJson(Object value) {
        try {
            return Json.MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One CSV row per policy with the summary fields. */
    public static String csv(List<SimulationResult> results) {
        StringBuilder sb = new StringBuilder();
        List<String> keys = new ArrayList<>(results.getFirst().summary().keySet());
        sb.append(String.join(",", keys)).append('\n');
        for (SimulationResult r : results) {
            Map<String, Object> m = r.summary();
            List<String> vals = new ArrayList<>();
            for (String k : keys) vals.add(csvCell(String.valueOf(m.get(k))));
            sb.append(String.join(",", vals)).append('\n');
        }
        return sb.toString();
    }

    private static String csvCell(String v) {
        return v.contains(",") || v.contains("\"") ? '"' + v.replace("\"", "\"\"") + '"' : v;
    }

    /** A column of the table: the goal it belongs to, its heading and how a result shows in it. */
    private record Column(String goal, String head, Function<SimulationResult, String> cell) {}

    private static final List<Column> COLUMNS = List.of(
            new Column("", "policy", SimulationResult::policy),
            new Column("", "jobs", r -> String.valueOf(r.jobs())),
            new Column("utilization", "util", r -> pct(r.utilization())),
            new Column("utilization", "frag", r -> pct(r.fragmentation())),
            new Column("waiting", "avg wait", r -> dur(r.waiting().mean())),
            new Column("waiting", "p95 wait", r -> dur(r.waiting().p95())),
            new Column("waiting", "p99 wait", r -> dur(r.waiting().p99())),
            new Column("waiting", "max wait", r -> dur(r.waiting().max())),
            new Column("completion time", "avg JCT", r -> dur(r.jct().mean())),
            new Column("completion time", "p50 JCT", r -> dur(r.jct().p50())),
            new Column("completion time", "p95 JCT", r -> dur(r.jct().p95())),
            new Column("completion time", "p99 JCT", r -> dur(r.jct().p99())),
            new Column("completion time", "slowdown", r -> String.format("%.2f", r.slowdown().mean())),
            new Column("completion time", "makespan", r -> dur(r.makespanSec())),
            new Column("fairness", "Jain", r -> String.format("%.3f", r.jainFairness())),
            new Column("", "preempt", r -> String.valueOf(r.preemptions())));

    /** Jobs their time limit stopped: a column only for traces with time limits (every other table stays as it was). */
    private static final Column TIMEOUTS = new Column("", "timeouts", r -> String.valueOf(r.timeouts()));

    /** GPU energy over the makespan, and what node power-down did (those only with it). */
    private static final Column KWH = new Column("energy", "kWh", r -> kwh(r.energy().kwh()));
    private static final List<Column> POWER_DOWN = List.of(
            new Column("power-down", "asleep node-h", r -> String.format("%,.1f", r.energy().powerDown().asleepNodeHours())),
            new Column("power-down", "wakeups", r -> String.valueOf(r.energy().powerDown().wakeups())),
            new Column("power-down", "wake wait/job", r -> dur(r.energy().powerDown().avgWakeWaitSec())));

    /** One row per policy, the four goals in column groups, then energy. */
    public static String table(List<SimulationResult> results) {
        List<Column> columns = new ArrayList<>(COLUMNS);
        if (results.stream().anyMatch(r -> r.timeLimited() > 0)) columns.add(TIMEOUTS);
        if (results.stream().allMatch(r -> r.energy() != null)) {
            columns.add(KWH);
            if (results.stream().allMatch(r -> r.energy().powerDown() != null)) columns.addAll(POWER_DOWN);
        }
        return table(results, columns);
    }

    /** kWh with three significant decimals for small runs, thousands separated for large ones. */
    public static String kwh(double v) {
        return v < 10 ? String.format("%.3f", v) : v < 1000 ? String.format("%.1f", v) : String.format("%,.0f", v);
    }

    private static String table(List<SimulationResult> results, List<Column> columns) {
        int c = columns.size();
        List<String[]> rows = new ArrayList<>();
        for (SimulationResult r : results) {
            String[] row = new String[c];
            for (int i = 0; i < c; i++) row[i] = columns.get(i).cell().apply(r);
            rows.add(row);
        }
        int[] w = new int[c];
        for (int i = 0; i < c; i++) {
            w[i] = columns.get(i).head().length();
            for (String[] r : rows) w[i] = Math.max(w[i], r[i].length());
        }
        StringBuilder sb = new StringBuilder();
        // goal headings centred over their column groups
        StringBuilder goals = new StringBuilder();
        for (int i = 0; i < c; ) {
            String goal = columns.get(i).goal();
            int j = i, width = 0;
            while (j < c && columns.get(j).goal().equals(goal)) width += w[j++] + 2;
            width -= 2;
            String label = goal.isEmpty() ? "" : goal.length() + 2 > width ? goal : pad(goal, width);
            goals.append(i == 0 ? "" : "  ").append(String.format("%-" + Math.max(1, width) + "s", label));
            i = j;
        }
        sb.append(goals.toString().stripTrailing()).append('\n');
        line(sb, columns.stream().map(Column::head).toArray(String[]::new), w);
        StringBuilder sep = new StringBuilder();
        for (int i = 0; i < c; i++) sep.append(i == 0 ? "" : "  ").append("-".repeat(w[i]));
        sb.append(sep).append('\n');
        for (String[] r : rows) line(sb, r, w);
        return sb.toString();
    }

    private static String pad(String goal, int width) {
        int dashes = width - goal.length() - 2;
        int left = dashes / 2;
        return "-".repeat(left) + " " + goal + " " + "-".repeat(dashes - left);
    }

    private static void line(StringBuilder sb, String[] cells, int[] w) {
        for (int i = 0; i < cells.length; i++) {
            if (i > 0) sb.append("  ");
            sb.append(i == 0 ? String.format("%-" + w[i] + "s", cells[i]) : String.format("%" + w[i] + "s", cells[i]));
        }
        sb.append('\n');
    }

    static String pct(double v) {
        return String.format("%.1f%%", 100 * v);
    }

    /** Seconds as a short human duration: 42s, 12.5m, 3.2h, 1.5d. */
    public static String dur(double s) {
        if (s < 120) return String.format("%.0fs", s);
        if (s < 7200) return String.format("%.1fm", s / 60);
        if (s < 172800) return String.format("%.1fh", s / 3600);
        return String.format("%.1fd", s / 86400);
    }
}
