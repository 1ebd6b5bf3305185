package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;

/** The pool at a glance: allocation, utilization, queue, tenants' shares; --watch refreshes it. */
@Command(name = "top", description = "Show the pool of a gpupool server at a glance (tenants' shares, allocation, queue); --watch refreshes every 2 s.")
public final class TopCommand extends ClientCommand {
    @Option(names = "--watch", description = "Refresh every 2 seconds until interrupted.")
    boolean watch;

    @Override
    public Integer call() throws InterruptedException {
        ApiClient api = api();
        PrintWriter out = out();
        do {
            JsonNode p = api.get("/api/v1/pool");
            JsonNode t = p.path("totals");
            if (watch) out.print("\033[H\033[2J");
            out.printf("policy %s | %d nodes | %.2f of %d GPUs allocated (%.0f%%)%s | %d running | %d queued%n", p.path("policy").asText(),
                    t.path("nodes").asInt(), t.path("gpusAllocated").asDouble(), t.path("gpus").asInt(), t.path("allocation").asDouble() * 100,
                    t.path("utilization").isNull() ? "" : String.format(" | utilization %.0f%%", t.path("utilization").asDouble() * 100),
                    p.path("runningCount").asInt(), p.path("pendingCount").asInt());
            TextTable table = new TextTable("tenant", "weight", "gpus", "share", "entitled", "running", "queued");
            for (JsonNode x : p.path("tenants")) {
                table.row(x.path("name").asText(), x.path("weight").asText(), String.format("%.2f", x.path("gpusHeld").asDouble()),
                        String.format("%.0f%%", x.path("share").asDouble() * 100), String.format("%.0f%%", x.path("entitlement").asDouble() * 100),
                        x.path("running").asText(), x.path("pending").asText());
            }
            out.print(table.render());
            out.flush();
            if (watch) Thread.sleep(2000);
        } while (watch);
        return 0;
    }
}
