package io.gpupool.sim.report;

import io.gpupool.sim.inflation.InflationStudy;
import io.gpupool.sim.metrics.ResultFormat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Output of the inflation study: the JSON contract, CSV, a console table, and the HTML report with charts. */
public final class InflationReport {
    private static final int W = 760, H = 340;

    private InflationReport() {}

    /** {@code [{"placement": ..., "curve": [{"arrived_pct": ..., "allocated_pct": ..., "unallocated_gpus": ...}, ...]}, ...]}. */
    public static String json(List<InflationStudy.Curve> curves) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (InflationStudy.Curve c : curves) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("placement", c.placement());
            List<Map<String, Object>> pts = new ArrayList<>();
            for (InflationStudy.Point p : c.curve()) {
                Map<String, Object> q = new LinkedHashMap<>();
                q.put("arrived_pct", p.arrivedPct());
                q.put("allocated_pct", p.allocatedPct());
                q.put("unallocated_gpus", p.unallocatedGpus());
                pts.add(q);
            }
            m.put("curve", pts);
            out.add(m);
        }
        return ResultFormat.toJson(out);
    }

    public static String csv(List<InflationStudy.Curve> curves) {
        StringBuilder sb = new StringBuilder("placement,arrived_pct,allocated_pct,unallocated_gpus\n");
        for (InflationStudy.Curve c : curves) {
            for (InflationStudy.Point p : c.curve()) {
                sb.append(c.placement().contains(",") ? '"' + c.placement() + '"' : c.placement()).append(',')
                        .append(p.arrivedPct()).append(',').append(p.allocatedPct()).append(',').append(p.unallocatedGpus()).append('\n');
            }
        }
        return sb.toString();
    }

    /**
     * One row per {@code everyPct} of arrived demand: per placement the allocated share and unallocated GPUs,
     * and, from 90% on, how many fewer GPUs the first placement leaves unallocated than each other one.
     */
    public static String table(List<InflationStudy.Curve> curves, int everyPct) {
        List<String> head = new ArrayList<>(List.of("arrived"));
        for (InflationStudy.Curve c : curves) {
            head.add(c.placement() + " alloc");
            head.add(c.placement() + " unalloc");
        }
        InflationStudy.Curve first = curves.getFirst();
        for (int k = 1; k < curves.size(); k++) head.add(first.placement() + " vs " + curves.get(k).placement());
        List<String[]> rows = new ArrayList<>();
        int n = curves.stream().mapToInt(c -> c.curve().size()).min().orElse(0);
        for (int i = 0; i < n; i++) {
            double arrived = first.curve().get(i).arrivedPct();
            int mark = i + 1;   // points are every 1% in the order they were crossed
            if (mark % everyPct != 0) continue;
            List<String> row = new ArrayList<>(List.of(String.format(Locale.ROOT, "%.1f%%", arrived)));
            for (InflationStudy.Curve c : curves) {
                row.add(String.format(Locale.ROOT, "%.1f%%", c.curve().get(i).allocatedPct()));
                row.add(String.format(Locale.ROOT, "%.1f", c.curve().get(i).unallocatedGpus()));
            }
            for (int k = 1; k < curves.size(); k++) {
                double mine = first.curve().get(i).unallocatedGpus(), other = curves.get(k).curve().get(i).unallocatedGpus();
                row.add(arrived >= 90 && other > 0 ? String.format(Locale.ROOT, "%+.1f%%", 100 * (mine - other) / other) : "");
            }
            rows.add(row.toArray(String[]::new));
        }
        return aligned(head, rows);
    }

    /**
     * Online against offline: at each offline level, the GPUs each curve leaves unallocated at its first point at
     * or past that level, the offline answer's, the least any placement could leave (the solver's bound, if
     * it gives one), and each curve's ratio to the offline answer (1.15 = 15% more unallocated GPUs).
     */
    public static String offlineTable(List<InflationStudy.Curve> curves, String solver, List<InflationStudy.Offline> answers) {
        List<String> head = new ArrayList<>(List.of("arrived"));
        for (InflationStudy.Curve c : curves) head.add(c.placement() + " unalloc");
        head.add("offline " + solver + " unalloc");
        head.add("bound");
        for (InflationStudy.Curve c : curves) head.add(c.placement() + " / offline");
        head.add("offline tasks");
        head.add("offline s");
        List<String[]> rows = new ArrayList<>();
        for (InflationStudy.Offline o : answers) {
            double level = o.point().arrivedPct();
            List<String> row = new ArrayList<>(List.of(String.format(Locale.ROOT, "%.2f%%", level)));
            List<Double> online = new ArrayList<>();
            for (InflationStudy.Curve c : curves) {
                var p = c.curve().stream().filter(x -> x.arrivedPct() >= level).findFirst();
                online.add(p.map(InflationStudy.Point::unallocatedGpus).orElse(Double.NaN));
                row.add(p.map(x -> String.format(Locale.ROOT, "%.1f", x.unallocatedGpus())).orElse("-"));
            }
            row.add(String.format(Locale.ROOT, "%.1f", o.point().unallocatedGpus()));
            row.add(Double.isNaN(o.minUnallocatedGpus()) ? "-" : String.format(Locale.ROOT, "%.1f", o.minUnallocatedGpus()));
            for (double u : online) row.add(Double.isNaN(u) || o.point().unallocatedGpus() <= 0 ? "-" : String.format(Locale.ROOT, "%.3f", u / o.point().unallocatedGpus()));
            row.add(String.format(Locale.ROOT, "%,d", o.tasks()));
            row.add(String.format(Locale.ROOT, "%.1f", o.seconds()));
            rows.add(row.toArray(String[]::new));
        }
        return "\n" + aligned(head, rows);
    }

    /** Right-aligned columns, each as wide as its widest cell, under the header and a line of dashes. */
    private static String aligned(List<String> head, List<String[]> rows) {
        int[] w = new int[head.size()];
        for (int i = 0; i < w.length; i++) {
            w[i] = head.get(i).length();
            for (String[] r : rows) w[i] = Math.max(w[i], r[i].length());
        }
        StringBuilder sb = new StringBuilder();
        appendRow(sb, head.toArray(String[]::new), w);
        StringBuilder sep = new StringBuilder();
        for (int i = 0; i < w.length; i++) sep.append(i == 0 ? "" : "  ").append("-".repeat(w[i]));
        sb.append(sep).append('\n');
        for (String[] r : rows) appendRow(sb, r, w);
        return sb.toString();
    }

    private static void appendRow(StringBuilder sb, String[] cells, int[] w) {
        for (int i = 0; i < cells.length; i++) sb.append(i == 0 ? "" : "  ").append(String.format("%" + w[i] + "s", cells[i]));
        sb.append('\n');
    }

    /** Chart name to SVG: allocation ratio and unallocated GPUs against arrived demand. */
    public static Map<String, String> charts(List<InflationStudy.Curve> curves) {
        SvgChart alloc = new SvgChart("Share of arrived GPU demand allocated", "arrived GPU demand (% of the pool's GPUs)", "allocated")
                .yFormat(v -> SvgChart.number(v) + "%");
        SvgChart unalloc = new SvgChart("GPUs left unallocated", "arrived GPU demand (% of the pool's GPUs)", "unallocated GPUs");
        // where placements differ: from 80% of the pool on
        SvgChart tail = new SvgChart("GPUs left unallocated, from 80% arrived demand", "arrived GPU demand (% of the pool's GPUs)", "unallocated GPUs");
        for (InflationStudy.Curve c : curves) {
            double[] x = c.curve().stream().mapToDouble(InflationStudy.Point::arrivedPct).toArray();
            alloc.line(c.placement(), x, c.curve().stream().mapToDouble(InflationStudy.Point::allocatedPct).toArray());
            unalloc.line(c.placement(), x, c.curve().stream().mapToDouble(InflationStudy.Point::unallocatedGpus).toArray());
            List<InflationStudy.Point> late = c.curve().stream().filter(p -> p.arrivedPct() >= 80).toList();
            tail.line(c.placement(), late.stream().mapToDouble(InflationStudy.Point::arrivedPct).toArray(),
                    late.stream().mapToDouble(InflationStudy.Point::unallocatedGpus).toArray());
        }
        Map<String, String> out = new LinkedHashMap<>();
        out.put("inflation-allocated", alloc.render(W, H));
        out.put("inflation-unallocated", unalloc.render(W, H));
        out.put("inflation-unallocated-from-80", tail.render(W, H));
        return out;
    }

    public static Path write(Path dir, List<InflationStudy.Curve> curves, Map<String, String> meta) throws IOException {
        Files.createDirectories(dir);
        Map<String, String> charts = charts(curves);
        for (var e : charts.entrySet()) Files.writeString(dir.resolve(e.getKey() + ".svg"), e.getValue(), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("inflation.json"), json(curves) + "\n", StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("inflation.csv"), csv(curves), StandardCharsets.UTF_8);
        StringBuilder h = new StringBuilder();
        Html.head(h, "gpupool workload inflation");
        h.append("<h1>gpupool workload inflation</h1>\n");
        Html.meta(h, meta);
        h.append("<p class=\"note\">Tasks are drawn from the trace with replacement and never leave; each is placed by the engine's "
                + "placement pipeline or counted as not allocated (the method of Weng et al., ATC'23). Unallocated GPUs = the pool's GPUs "
                + "minus the GPU demand allocated (shares count fractionally).</p>\n");
        for (String svg : charts.values()) h.append("<figure>").append(svg).append("</figure>\n");
        h.append("<pre>").append(Html.esc(table(curves, 5))).append("</pre>\n");
        Html.foot(h);
        Path index = dir.resolve("index.html");
        Files.writeString(index, h.toString(), StandardCharsets.UTF_8);
        return index;
    }
}
