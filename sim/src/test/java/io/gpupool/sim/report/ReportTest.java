package io.gpupool.sim.report;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.sim.Simulator;
import io.gpupool.sim.metrics.ResultFormat;
import io.gpupool.sim.metrics.SimulationResult;
import io.gpupool.sim.trace.SyntheticTrace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The HTML report works offline and carries every chart; the charts are well-formed SVG. */
class ReportTest {
    @TempDir Path dir;

    private static List<SimulationResult> results() {
        var cluster = ClusterSpecs.parse("4x8:A100-80GB", GpuCatalog.standard());
        var trace = new SyntheticTrace(new SyntheticTrace.Params(3, 800, 1.2, cluster.totalGpus(), 4, 0.3));
        return List.of(
                new Simulator(cluster, SchedulerConfig.defaults("fcfs")).run(trace),
                new Simulator(cluster, SchedulerConfig.defaults("fair-share")).run(trace));
    }

    @Test
    void theReportIsOneSelfContainedPageWithEveryChart() throws Exception {
        Path index = SimulationReport.write(dir, results(), Map.of("trace", "synthetic", "cluster", "4x8:A100-80GB"));
        String html = Files.readString(index);
        // nothing is fetched: no script, no stylesheet or image link, no URL but the SVG namespace
        assertThat(html).doesNotContain("<script").doesNotContain("<link").doesNotContain("src=");
        Matcher urls = Pattern.compile("https?://[^\"'\\s<]+").matcher(html);
        while (urls.find()) assertThat(urls.group()).isEqualTo("http://www.w3.org/2000/svg");
        assertThat(html).contains("JCT", "Queue length over time", "Utilization over time", "GPUs held per tenant over time: fcfs",
                "GPUs held per tenant over time: fair-share", "Jain", "team-a");
        assertThat(Pattern.compile("<svg ").matcher(html).results().count()).isEqualTo(7);
        for (String name : List.of("jct-cdf", "queue", "utilization", "fragmentation", "fairness", "tenants-fcfs", "tenants-fair-share")) {
            Path svg = dir.resolve(name + ".svg");
            assertThat(svg).exists();
            wellFormed(Files.readString(svg));
        }
        assertThat(dir.resolve("results.json")).exists();
        assertThat(Files.readString(dir.resolve("results.csv"))).startsWith("policy,placement,jobs,");
    }

    @Test
    void theJsonHasTheContractFieldsAndTheTableTheFourGoals() {
        List<SimulationResult> rs = results();
        String json = ResultFormat.json(rs, Map.of("skipped_rows", 0L));
        for (String field : List.of("policy", "jobs", "avg_jct_s", "p50_jct_s", "p95_jct_s", "p99_jct_s", "avg_wait_s", "max_wait_s",
                "makespan_s", "utilization", "jain_fairness", "fragmentation", "tenants", "skipped_rows")) {
            assertThat(json).contains("\"" + field + "\"");
        }
        String table = ResultFormat.table(rs);
        assertThat(table).contains("utilization", "waiting", "completion time", "fairness", "fcfs", "fair-share");
        assertThat(table.lines().count()).isEqualTo(5);
    }

    @Test
    void energyAndPowerDownAreInEveryOutput() throws Exception {
        var cluster = ClusterSpecs.parse("4x8:A100-80GB", GpuCatalog.standard());
        var trace = new SyntheticTrace(new SyntheticTrace.Params(3, 300, 0.3, cluster.totalGpus(), 3, 0.3));
        List<SimulationResult> rs = List.of(new Simulator(cluster, SchedulerConfig.defaults("fair-share"))
                .powerDown(io.gpupool.sim.energy.PowerDown.parse("idle=10m,wake=2m")).run(trace));
        assertThat(rs.getFirst().energy().powerDown().wakeups()).as("a light load lets nodes sleep and wake").isPositive();
        String html = Files.readString(SimulationReport.write(dir, rs, Map.of("trace", "synthetic")));
        assertThat(html).contains("<th>kWh</th>", "<th>idle kWh</th>", "<th>asleep node-h</th>", "<th>wake wait / job</th>");
        // the tenants' tables have a kWh column too: one per tenant table, plus the main table's
        assertThat(Pattern.compile("<th>kWh</th>").matcher(html).results().count()).isEqualTo(2);
        String json = ResultFormat.json(rs, Map.of());
        for (String field : List.of("energy_kwh", "idle_energy_kwh", "power_down", "asleep_node_hours", "wakeups", "wake_wait_s",
                "avg_wake_wait_s", "jobs_waited_for_wake", "powered_utilization", "node_utilization")) {
            assertThat(json).contains("\"" + field + "\"");
        }
        assertThat(ResultFormat.csv(rs).lines().findFirst().orElseThrow()).endsWith(",preemptions,energy_kwh,idle_energy_kwh,power_down,"
                + "asleep_node_hours,wakeups,wake_wait_s,avg_wake_wait_s,jobs_waited_for_wake,powered_utilization,node_utilization");
        assertThat(ResultFormat.table(rs)).contains("energy", "kWh", "power-down", "asleep node-h", "wakeups", "wake wait/job");
    }

    @Test
    void chartsAreDeterministicAndEscapeNames() throws Exception {
        String a = new SvgChart("A <b> & c", "x", "y").line("p<1>", new double[] {1, 2, 3}, new double[] {0, 1, 4}).render(400, 200);
        String b = new SvgChart("A <b> & c", "x", "y").line("p<1>", new double[] {1, 2, 3}, new double[] {0, 1, 4}).render(400, 200);
        assertThat(a).isEqualTo(b).contains("A &lt;b&gt; &amp; c").contains("p&lt;1&gt;");
        wellFormed(a);
        wellFormed(new SvgChart("log", "x", "y").logX().line("s", new double[] {0, 10, 1000}, new double[] {1, 2, 3}).render(400, 200));
        wellFormed(new SvgChart("empty", "x", "y").render(400, 200));
    }

    private static void wellFormed(String svg) throws Exception {
        var doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        assertThat(doc.getDocumentElement().getNodeName()).isEqualTo("svg");
    }
}
