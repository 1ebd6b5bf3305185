package io.gpupool.sim.report;

import io.gpupool.sim.metrics.FairnessWindows;
import io.gpupool.sim.metrics.ResultFormat;
import io.gpupool.sim.metrics.SimulationResult;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The report of a replay ({@code --report DIR}): {@code index.html}, self-contained (inline SVG and CSS,
 * no script, no network), with the four goals side by side, per-tenant shares and the charts; the charts
 * again as SVG files for docs; and the results as JSON and CSV.
 */
public final class SimulationReport {
    private static final int W = 760, H = 340;
    private static final int TOP_TENANTS = 7;

    private SimulationReport() {}

    /** Writes the report into {@code dir} (created if needed); returns the path of index.html. */
    public static Path write(Path dir, List<SimulationResult> results, Map<String, String> meta) throws IOException {
        Files.createDirectories(dir);
        Map<String, String> charts = charts(results);
        for (var e : charts.entrySet()) Files.writeString(dir.resolve(e.getKey() + ".svg"), e.getValue(), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("results.json"), ResultFormat.json(results, Map.of()) + "\n", StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("results.csv"), ResultFormat.csv(results), StandardCharsets.UTF_8);
        Path index = dir.resolve("index.html");
        Files.writeString(index, html(results, meta, charts), StandardCharsets.UTF_8);
        return index;
    }

    /** Chart name (file name without .svg) to SVG, in report order. */
    public static Map<String, String> charts(List<SimulationResult> results) {
        Map<String, String> out = new LinkedHashMap<>();
        SvgChart cdf = new SvgChart("Job completion time, CDF", "JCT (log scale)", "fraction of jobs").logX()
                .xFormat(SvgChart::duration).yFormat(SvgChart::percent).yRange(0, 1);
        for (SimulationResult r : results) {
            double[] y = new double[r.jctCdf().length];
            for (int k = 0; k < y.length; k++) y[k] = (k + 1) / (double) y.length;
            cdf.line(r.policy(), r.jctCdf(), y);
        }
        out.put("jct-cdf", cdf.render(W, H));
        TimeAxis axis = TimeAxis.of(results);
        SvgChart queue = new SvgChart("Queue length over time", axis.label, "jobs queued (average)").xFrom(0);
        SvgChart util = new SvgChart("Utilization over time", axis.label, "GPUs allocated").xFrom(0).yFormat(SvgChart::percent).yRange(0, 1);
        SvgChart frag = new SvgChart("Fragmentation over time: free GPUs no queued job can use", axis.label, "share of the pool").xFrom(0).yFormat(SvgChart::percent);
        SvgChart jain = new SvgChart("Jain's fairness index over time (windows with jobs waiting)", axis.label, "Jain's index").xFrom(0).yRange(0, 1);
        for (SimulationResult r : results) {
            SimulationResult.Timeline t = r.timeline();
            double[] x = axis.xs(t);
            queue.line(r.policy(), x, t.queued());
            util.line(r.policy(), x, scale(t.usedGpus(), 1.0 / r.totalGpus()));
            frag.line(r.policy(), x, scale(t.fragmentedGpus(), 1.0 / r.totalGpus()));
            double[][] j = jainSeries(r.fairness(), axis);
            jain.line(r.policy(), j[0], j[1]);
        }
        out.put("queue", queue.render(W, H));
        out.put("utilization", util.render(W, H));
        out.put("fragmentation", frag.render(W, H));
        out.put("fairness", jain.render(W, H));
        for (SimulationResult r : results) out.put("tenants-" + fileName(r.policy()), tenantChart(r, axis));
        return out;
    }

    /** Stacked GPUs held by the largest tenants (the rest as "others") over time. */
    private static String tenantChart(SimulationResult r, TimeAxis axis) {
        SimulationResult.Timeline t = r.timeline();
        double[] x = axis.xs(t);
        SvgChart c = new SvgChart("GPUs held per tenant over time: " + r.policy(), axis.label, "GPUs (stacked)").xFrom(0).yRange(0, r.totalGpus());
        List<String> top = r.tenants().stream().limit(TOP_TENANTS).map(SimulationResult.TenantResult::tenant).toList();
        double[] base = new double[x.length];
        double[] others = new double[x.length];
        for (int i = 0; i < t.tenants().size(); i++) {
            if (top.contains(t.tenants().get(i))) continue;
            for (int k = 0; k < x.length; k++) others[k] += t.tenantGpus()[i][k];
        }
        for (String name : top) {
            double[] g = t.tenantGpus()[t.tenants().indexOf(name)];
            double[] upper = new double[x.length];
            for (int k = 0; k < x.length; k++) upper[k] = base[k] + g[k];
            c.band(name, x, base.clone(), upper);
            base = upper;
        }
        if (t.tenants().size() > top.size()) {
            double[] upper = new double[x.length];
            for (int k = 0; k < x.length; k++) upper[k] = base[k] + others[k];
            c.band("others", x, base.clone(), upper);
        }
        return c.render(W, H);
    }

    /** Fairness windows averaged (weighted by contended time) into the timeline's buckets. */
    private static double[][] jainSeries(List<FairnessWindows.Window> windows, TimeAxis axis) {
        if (windows.isEmpty()) return new double[][] {new double[0], new double[0]};
        long first = windows.getFirst().startMs(), last = windows.getLast().startMs();
        int bins = (int) Math.min(200, windows.size());
        double width = Math.max(1, (last - first + 1) / (double) bins);
        double[] num = new double[bins], den = new double[bins], start = new double[bins];
        for (FairnessWindows.Window w : windows) {
            int b = (int) Math.min(bins - 1, (w.startMs() - first) / width);
            num[b] += w.jain() * w.contendedMs();
            den[b] += w.contendedMs();
        }
        List<double[]> pts = new ArrayList<>();
        for (int b = 0; b < bins; b++) {
            start[b] = (first + b * width) / 1000.0 / axis.unitSec;   // window starts count from the first submit
            if (den[b] > 0) pts.add(new double[] {start[b], num[b] / den[b]});
        }
        double[] xs = new double[pts.size()], ys = new double[pts.size()];
        for (int i = 0; i < xs.length; i++) { xs[i] = pts.get(i)[0]; ys[i] = pts.get(i)[1]; }
        return new double[][] {xs, ys};
    }

    /** Time since the first submit, in days, hours or minutes depending on the longest run. */
    private record TimeAxis(double unitSec, String label) {
        static TimeAxis of(List<SimulationResult> results) {
            double span = results.stream().mapToDouble(SimulationResult::makespanSec).max().orElse(0);
            if (span >= 3 * 86400) return new TimeAxis(86400, "days since the first submit");
            if (span >= 3 * 3600) return new TimeAxis(3600, "hours since the first submit");
            return new TimeAxis(60, "minutes since the first submit");
        }

        double[] xs(SimulationResult.Timeline t) {
            double[] x = new double[t.queued().length];
            for (int k = 0; k < x.length; k++) x[k] = (k + 0.5) * t.bucketSec() / unitSec;
            return x;
        }
    }

    private static double[] scale(double[] a, double f) {
        double[] out = new double[a.length];
        for (int i = 0; i < a.length; i++) out[i] = a[i] * f;
        return out;
    }

    static String fileName(String s) {
        return s.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9._-]+", "-");
    }

    // ---- HTML -----------------------------------------------------------------------------------

    private static String html(List<SimulationResult> results, Map<String, String> meta, Map<String, String> charts) {
        StringBuilder h = new StringBuilder();
        Html.head(h, "gpupool simulation: " + meta.getOrDefault("trace", ""));
        h.append("<h1>gpupool simulation</h1>\n");
        Html.meta(h, meta);
        boolean energy = results.stream().allMatch(r -> r.energy() != null);
        boolean down = energy && results.stream().allMatch(r -> r.energy().powerDown() != null);
        h.append("<h2>The four goals, side by side</h2>\n<table>\n<tr><th rowspan=\"2\">policy</th><th rowspan=\"2\">jobs</th>"
                + "<th colspan=\"2\">utilization</th><th colspan=\"3\">waiting</th><th colspan=\"6\">completion time</th><th>fairness</th>"
                + "<th rowspan=\"2\">preemptions</th><th rowspan=\"2\">rejected / unfinished</th>"
                + (energy ? "<th colspan=\"" + (down ? 7 : 2) + "\">energy" + (down ? " and node power-down" : "") + "</th>" : "") + "</tr>\n"
                + "<tr><th>util</th><th>frag</th><th>avg</th><th>p95</th><th>max</th><th>avg JCT</th><th>p50</th><th>p95</th><th>p99</th>"
                + "<th>slowdown</th><th>makespan</th><th>Jain</th>"
                + (energy ? "<th>kWh</th><th>idle kWh</th>" : "")
                + (down ? "<th>asleep node-h</th><th>wakeups</th><th>wake wait / job</th><th>util of powered</th><th>node util</th>" : "")
                + "</tr>\n");
        for (SimulationResult r : results) {
            h.append("<tr><td>").append(Html.esc(r.policy())).append("</td>");
            cells(h, String.format("%,d", r.jobs()), pct(r.utilization()), pct(r.fragmentation()),
                    ResultFormat.dur(r.waiting().mean()), ResultFormat.dur(r.waiting().p95()), ResultFormat.dur(r.waiting().max()),
                    ResultFormat.dur(r.jct().mean()), ResultFormat.dur(r.jct().p50()), ResultFormat.dur(r.jct().p95()), ResultFormat.dur(r.jct().p99()),
                    String.format("%.2f", r.slowdown().mean()), ResultFormat.dur(r.makespanSec()), String.format("%.3f", r.jainFairness()),
                    String.format("%,d", r.preemptions()), r.rejected() + " / " + r.unfinished());
            if (energy) cells(h, ResultFormat.kwh(r.energy().kwh()), ResultFormat.kwh(r.energy().idleKwh()));
            if (down) {
                SimulationResult.PowerDownResult p = r.energy().powerDown();
                cells(h, String.format("%,.1f", p.asleepNodeHours()), String.format("%,d", p.wakeups()), ResultFormat.dur(p.avgWakeWaitSec()),
                        pct(p.poweredUtilization()), pct(p.nodeUtilization()));
            }
            h.append("</tr>\n");
        }
        h.append("</table>\n");
        h.append("<p class=\"note\"><b>util</b>: allocated GPU-time / GPU-time offered between the first submit and the last finish. "
                + "<b>frag</b>: time-average share of the pool that was free but usable by no queued job (wrong model, too few idle GPUs "
                + "on the node for a replica, too small a free share). <b>wait</b>: time queued, over all waits of a job. "
                + "<b>JCT</b>: finish &minus; submit; <b>slowdown</b>: JCT / run time. <b>Jain</b>: Jain's index over tenants' GPU-time "
                + "divided by their weighted max-min fair share, in windows of time during which jobs waited, averaged by waiting time "
                + "(1 = every tenant got its share)."
                + (energy ? " <b>kWh</b>: the GPUs' energy from the first submit to the last finish: a powered-on GPU draws its idle power, "
                        + "a busy one idle + u &times; (TDP &minus; idle), a shared one its grants' share of that (model and u in the "
                        + "parameters above); <b>idle kWh</b>: the part no job was charged for (idle GPUs of powered-on nodes, nodes "
                        + "powered off)." : "")
                + (down ? " <b>asleep node-h</b>: node-hours powered off; <b>wake wait / job</b>: time jobs spent queued only "
                        + "because the nodes they needed were waking up, over all jobs; <b>util of powered</b>: allocated GPU-time / GPU-time "
                        + "of powered-on nodes; <b>node util</b>: node-time some job used a node / node-time nodes were on." : "")
                + "</p>\n");
        for (var e : charts.entrySet()) {
            if (e.getKey().startsWith("tenants-")) continue;
            h.append("<figure>").append(e.getValue()).append("</figure>\n");
        }
        h.append("<h2>Tenants</h2>\n<p class=\"note\"><b>share</b>: part of all GPU-time used. <b>entitled</b>: part of all fair GPU-time "
                + "while jobs waited (weighted max-min share given what the tenant asked for). <b>held / fair</b>: GPU-time held over "
                + "fair GPU-time while jobs waited (above 1: more than its share).</p>\n");
        for (SimulationResult r : results) {
            h.append("<h3>").append(Html.esc(r.policy())).append("</h3>\n<figure>")
                    .append(charts.get("tenants-" + fileName(r.policy()))).append("</figure>\n");
            boolean tenantEnergy = r.tenants().stream().noneMatch(t -> Double.isNaN(t.energyKwh()));
            h.append("<table>\n<tr><th>tenant</th><th>weight</th><th>jobs</th><th>GPU-hours</th><th>share</th><th>entitled</th>"
                    + "<th>held / fair</th><th>avg wait</th>" + (tenantEnergy ? "<th>kWh</th>" : "") + "</tr>\n");
            for (SimulationResult.TenantResult t : r.tenants()) {
                h.append("<tr><td>").append(Html.esc(t.tenant())).append("</td>");
                cells(h, SvgChart.number(t.weight()), String.format("%,d", t.jobs()), String.format("%,.1f", t.gpuHours()), pct(t.share()),
                        pct(t.entitledShare()), String.format("%.2f", t.heldVsFair()), ResultFormat.dur(t.avgWaitSec()));
                if (tenantEnergy) cells(h, ResultFormat.kwh(t.energyKwh()));
                h.append("</tr>\n");
            }
            h.append("</table>\n");
        }
        if (results.stream().anyMatch(r -> !r.rejectReasons().isEmpty())) {
            h.append("<h2>Jobs that did not run</h2>\n");
            for (SimulationResult r : results) {
                if (r.rejectReasons().isEmpty()) continue;
                h.append("<h3>").append(Html.esc(r.policy())).append(" (first ").append(r.rejectReasons().size()).append(")</h3>\n<ul>\n");
                r.rejectReasons().forEach((id, why) -> h.append("<li><code>").append(Html.esc(id)).append("</code>: ").append(Html.esc(why)).append("</li>\n"));
                h.append("</ul>\n");
            }
        }
        Html.foot(h);
        return h.toString();
    }

    private static void cells(StringBuilder h, String... values) {
        for (String v : values) h.append("<td class=\"num\">").append(Html.esc(v)).append("</td>");
    }

    private static String pct(double v) {
        return String.format("%.1f%%", 100 * v);
    }
}
