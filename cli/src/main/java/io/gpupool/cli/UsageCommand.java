package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Usage accounting of a gpupool server: GET /api/v1/usage as a table, JSON or CSV. */
@Command(name = "usage", description = "Show GPU usage of a gpupool server over a time window: GPU-hours allocated and used, GPU-memory-hours, "
        + "energy, jobs by end state and wait times, by tenant, user, GPU model, node or day. A member token sees its own tenant.")
public final class UsageCommand extends ClientCommand {
    enum Format { table, json, csv }

    @Option(names = "--since", paramLabel = "WHEN", description = "Start: an age (30d, 12h, 90m), a date (2026-12-01, UTC), an ISO-8601 instant "
            + "or epoch milliseconds (default: 30 days before --until).")
    String since;
    @Option(names = "--until", paramLabel = "WHEN", description = "End, exclusive, in the same forms (default: now).")
    String until;
    @Option(names = "--by", paramLabel = "GROUP", defaultValue = "tenant", description = "tenant, user, model, node, day or hour (UTC) (default: ${DEFAULT-VALUE}).")
    String by;
    @Option(names = "--tenant", paramLabel = "NAME", description = "Only this tenant (admin tokens; a member token sees only its own).")
    String tenant;
    @Option(names = "--output", paramLabel = "FORMAT", defaultValue = "table", description = "Output format: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    Format format;

    @Override
    public Integer call() {
        List<String> q = new ArrayList<>();
        add(q, "since", since);
        add(q, "until", until);
        add(q, "by", by);
        add(q, "tenant", tenant);
        JsonNode r = api().get("/api/v1/usage?" + String.join("&", q));
        PrintWriter out = out();
        switch (format) {
            case json -> Json.print(out, r);
            case csv -> csv(out, r);
            case table -> table(out, r);
        }
        out.flush();
        return 0;
    }

    private static void add(List<String> q, String name, String value) {
        if (value != null) q.add(name + "=" + URLEncoder.encode(value, StandardCharsets.UTF_8));
    }

    private static void table(PrintWriter out, JsonNode r) {
        out.printf("usage %s .. %s by %s%s%n", r.path("since").asText(), r.path("until").asText(), r.path("by").asText(),
                r.path("tenant").isTextual() ? " (tenant " + r.path("tenant").asText() + ")" : "");
        TextTable t = new TextTable(r.path("by").asText(), "gpu-h alloc", "gpu-h used", "used %", "mem GiB-h", "kWh", "jobs", "wait p50/p90/p99 s")
                .alignRight(1, 2, 3, 4, 5);
        for (JsonNode g : r.path("groups")) row(t, g);
        row(t, r.path("total"));
        out.print(t.render());
    }

    private static void row(TextTable t, JsonNode g) {
        double alloc = g.path("gpuHoursAllocated").asDouble();
        double used = g.path("gpuHoursUsed").asDouble();
        JsonNode w = g.path("waitSeconds");
        t.row(g.path("key").asText(), fixed(alloc, 3), fixed(used, 3), alloc > 0 ? fixed(100 * used / alloc, 1) : "-",
                fixed(g.path("gpuMemoryGibHours").asDouble(), 1), fixed(g.path("energyKwh").asDouble(), 3), jobs(g.path("jobs"), " "),
                w.path("count").asInt() == 0 ? "-" : TextTable.number(w.path("p50").asDouble()) + "/" + TextTable.number(w.path("p90").asDouble())
                        + "/" + TextTable.number(w.path("p99").asDouble()));
    }

    /** Groups only (the total row of the table would be counted twice by a spreadsheet's sum). */
    private static void csv(PrintWriter out, JsonNode r) {
        out.println(r.path("by").asText() + ",gpu_seconds_allocated,gpu_hours_allocated,gpu_seconds_used,gpu_hours_used,gpu_memory_gib_hours,"
                + "energy_joules,energy_kwh,jobs,wait_count,wait_p50_s,wait_p90_s,wait_p99_s,wait_max_s");
        for (JsonNode g : r.path("groups")) {
            JsonNode w = g.path("waitSeconds");
            List<String> cells = List.of(quote(g.path("key").asText()), g.path("gpuSecondsAllocated").asText(), g.path("gpuHoursAllocated").asText(),
                    g.path("gpuSecondsUsed").asText(), g.path("gpuHoursUsed").asText(), g.path("gpuMemoryGibHours").asText(),
                    g.path("energyJoules").asText(), g.path("energyKwh").asText(), quote(jobs(g.path("jobs"), ";")), w.path("count").asText(),
                    w.path("p50").asText(), w.path("p90").asText(), w.path("p99").asText(), w.path("max").asText());
            out.println(String.join(",", cells));
        }
    }

    private static String jobs(JsonNode byState, String sep) {
        List<String> parts = new ArrayList<>();
        byState.fieldNames().forEachRemaining(s -> parts.add(s.toLowerCase(Locale.ROOT) + ":" + byState.path(s).asLong()));
        return parts.isEmpty() ? "-" : String.join(sep, parts);
    }

    private static String fixed(double v, int decimals) {
        return String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    /** A CSV field, quoted when it holds a comma, quote or line break. */
    static String quote(String s) {
        if (s.indexOf(',') < 0 && s.indexOf('"') < 0 && s.indexOf('\n') < 0 && s.indexOf('\r') < 0) return s;
        return '"' + s.replace("\"", "\"\"") + '"';
    }
}
