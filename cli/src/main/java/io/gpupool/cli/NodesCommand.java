package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** Nodes with their GPUs' allocation and telemetry. */
@Command(name = "nodes", description = "List the nodes of a gpupool server with each GPU's allocated share and jobs; a node that takes no new work says why (cordoned, lost, waiting).")
public final class NodesCommand implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin ClientOptions client;

    @Override
    public Integer call() {
        JsonNode nodes = client.client().get("/api/v1/nodes").path("nodes");
        TextTable table = new TextTable("node", "model", "gpu", "allocated", "util", "jobs");
        for (JsonNode n : nodes) {
            for (JsonNode g : n.path("gpus")) {
                List<String> jobs = new ArrayList<>();
                for (JsonNode t : g.path("tasks")) jobs.add((t.path("jobId").isNull() ? "(" + t.path("tenant").asText() + ")" : t.path("jobId").asText())
                        + (t.path("milli").asInt() < 1000 ? ":" + t.path("milli").asInt() / 10 + "%" : ""));
                JsonNode tel = g.path("telemetry");
                table.row(n.path("name").asText() + condition(n), n.path("model").asText(),
                        g.path("index").asText(), g.path("usedMilli").asInt() / 10 + "%",
                        tel.isNull() || tel.isMissingNode() ? "-" : Math.round(tel.path("utilPercent").asDouble()) + "%", String.join(" ", jobs));
            }
        }
        spec.commandLine().getOut().print(table.render());
        spec.commandLine().getOut().flush();
        return 0;
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
