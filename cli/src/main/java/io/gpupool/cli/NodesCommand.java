package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;

import java.util.ArrayList;
import java.util.List;

/** Nodes with their GPUs' allocation and telemetry. */
@Command(name = "nodes", description = "List the nodes of a gpupool server with each GPU's allocated share and jobs; a node that takes no new work says why (cordoned, lost, waiting). "
        + "The isolation column says what the node's agent enforces on its jobs (cgroup mode and controls; what it lacks in parentheses).")
public final class NodesCommand extends ClientCommand {

    @Override
    public Integer call() {
        JsonNode nodes = api().get("/api/v1/nodes").path("nodes");
        TextTable table = new TextTable("node", "model", "gpu", "allocated", "util", "isolation", "jobs");
        for (JsonNode n : nodes) {
            boolean first = true;
            for (JsonNode g : n.path("gpus")) {
                List<String> jobs = new ArrayList<>();
                for (JsonNode t : g.path("tasks")) jobs.add((t.path("jobId").isNull() ? "(" + t.path("tenant").asText() + ")" : t.path("jobId").asText())
                        + (t.path("milli").asInt() < 1000 ? ":" + t.path("milli").asInt() / 10 + "%" : ""));
                JsonNode tel = g.path("telemetry");
                table.row(n.path("name").asText() + condition(n), n.path("model").asText(),
                        g.path("index").asText(), g.path("usedMilli").asInt() / 10 + "%",
                        tel.isNull() || tel.isMissingNode() ? "-" : Math.round(tel.path("utilPercent").asDouble()) + "%",
                        first ? isolation(n.path("isolation")) : "", String.join(" ", jobs));
                first = false;
            }
        }
        out().print(table.render());
        out().flush();
        return 0;
    }

    /**
     * The node's confinement in a few words: "hybrid cpu,memory,swap,devices,kill", what it lacks in parentheses
     * ("v2 cpu,memory,pids,devices (no swap)"), "none" where jobs run unconfined, "-" where the server does not know.
     */
    static String isolation(JsonNode c) {
        if (c.isNull() || c.isMissingNode()) return "-";
        String mode = c.path("mode").asText();
        if (mode.equals("none")) return "none";
        java.util.LinkedHashSet<String> enforced = new java.util.LinkedHashSet<>();
        for (JsonNode e : c.path("enforced")) enforced.add(control(e.asText()));
        java.util.LinkedHashSet<String> missing = new java.util.LinkedHashSet<>();
        for (JsonNode m : c.path("missing")) {
            String name = control(m.asText());
            if (!enforced.contains(name)) missing.add(name); // devices(bpf) missing while devices(v1) holds: still devices
        }
        return mode + " " + String.join(",", enforced) + (missing.isEmpty() ? "" : " (no " + String.join(",", missing) + ")");
    }

    /** "memory(v1)" and "memory: why" are both "memory". */
    private static String control(String s) {
        int end = s.length();
        for (char ch : new char[] {'(', ':'}) if (s.indexOf(ch) >= 0) end = Math.min(end, s.indexOf(ch));
        return s.substring(0, end).trim();
    }

    /**
     * What keeps a node from taking new work: an admin's cordon, its agent lost or not back yet after a server restart;
     * and what limits it: jobs under its agent's account (not their owners'), accounts it lacks.
     */
    private static String condition(JsonNode n) {
        List<String> c = new ArrayList<>();
        if (n.path("cordoned").asBoolean()) c.add("cordoned");
        String state = n.path("state").asText();
        if (state.equals("lost") || state.equals("waiting")) c.add(state);
        JsonNode accounts = n.path("accounts");
        if (accounts.isObject() && !accounts.path("switches").asBoolean()) c.add("shared account");
        for (JsonNode missing : accounts.path("missing")) c.add("no account " + missing.asText());
        return c.isEmpty() ? "" : " (" + String.join(", ", c) + ")";
    }
}
