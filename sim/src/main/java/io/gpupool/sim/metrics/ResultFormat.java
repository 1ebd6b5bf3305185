package io.gpupool.sim.metrics;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Renders results of several policies side by side: console table, JSON array, CSV. */
public final class ResultFormat {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private ResultFormat() {}

    public static String json(List<SimulationResult> results) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (SimulationResult r : results) rows.add(r.summary());
        try {
            return JSON.writeValueAsString(rows);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    public static String csv(List<SimulationResult> results) {
        StringBuilder sb = new StringBuilder();
        List<String> keys = new ArrayList<>(results.getFirst().summary().keySet());
        sb.append(String.join(",", keys)).append('\n');
        for (SimulationResult r : results) {
            Map<String, Object> m = r.summary();
            List<String> vals = new ArrayList<>();
            for (String k : keys) vals.add(String.valueOf(m.get(k)));
            sb.append(String.join(",", vals)).append('\n');
        }
        return sb.toString();
    }

    /** One row per policy, the four goals in column groups. */
    public static String table(List<SimulationResult> results) {
        String[] head = {"policy", "jobs", "avg JCT", "p50 JCT", "p95 JCT", "p99 JCT", "avg wait", "max wait", "slowdown", "makespan", "util", "Jain", "preempt"};
        List<String[]> rows = new ArrayList<>();
        for (SimulationResult r : results) {
            Map<String, Object> m = r.summary();
            rows.add(new String[] {
                    (String) m.get("policy"), String.valueOf(m.get("jobs")),
                    dur(m.get("avg_jct_s")), dur(m.get("p50_jct_s")), dur(m.get("p95_jct_s")), dur(m.get("p99_jct_s")),
                    dur(m.get("avg_wait_s")), dur(m.get("max_wait_s")), String.format("%.2f", (double) m.get("avg_slowdown")),
                    dur(m.get("makespan_s")), String.format("%.1f%%", 100 * (double) m.get("utilization")),
                    String.format("%.3f", (double) m.get("jain_fairness")), String.valueOf(m.get("preemptions"))});
        }
        int[] w = new int[head.length];
        for (int i = 0; i < head.length; i++) {
            w[i] = head[i].length();
            for (String[] r : rows) w[i] = Math.max(w[i], r[i].length());
        }
        StringBuilder sb = new StringBuilder();
        line(sb, head, w);
        StringBuilder sep = new StringBuilder();
        for (int i = 0; i < w.length; i++) sep.append(i == 0 ? "" : "  ").append("-".repeat(w[i]));
        sb.append(sep).append('\n');
        for (String[] r : rows) line(sb, r, w);
        return sb.toString();
    }

    private static void line(StringBuilder sb, String[] cells, int[] w) {
        for (int i = 0; i < cells.length; i++) {
            if (i > 0) sb.append("  ");
            sb.append(i == 0 ? String.format("%-" + w[i] + "s", cells[i]) : String.format("%" + w[i] + "s", cells[i]));
        }
        sb.append('\n');
    }

    /** Seconds as a short human duration: 42s, 12.5m, 3.2h, 1.5d. */
    static String dur(Object seconds) {
        double s = ((Number) seconds).doubleValue();
        if (s < 120) return String.format("%.0fs", s);
        if (s < 7200) return String.format("%.1fm", s / 60);
        if (s < 172800) return String.format("%.1fh", s / 3600);
        return String.format("%.1fd", s / 86400);
    }
}
