package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;

import java.io.PrintWriter;

/** The head of the queue with each job's reason for waiting; a job array is one line with its tasks counted. */
@Command(name = "queue", description = "List queued jobs of a gpupool server with the reason each one waits.")
public final class QueueCommand extends ClientCommand {

    @Override
    public Integer call() {
        JsonNode pool = api().get("/api/v1/pool");
        PrintWriter out = out();
        TextTable table = new TextTable("job", "tenant", "gpus", "waiting", "why it waits");
        for (JsonNode j : pool.path("queue")) {
            String gpus = j.path("numGpus").asText() + (j.path("gpuMilli").asInt() < 1000 ? "x" + j.path("gpuMilli").asInt() / 10 + "%" : "");
            long waited = (pool.path("atMs").asLong() - j.path("submittedMs").asLong()) / 1000;
            JsonNode a = j.path("array");
            String id = a.isObject() ? j.path("id").asText() + "[" + a.path("pending").asInt() + " pending, " + a.path("running").asInt() + " running"
                    + (a.path("cap").asInt() > 0 ? ", %" + a.path("cap").asInt() : "") + "]" : j.path("id").asText();
            table.row(id, j.path("tenant").asText(), gpus, waited + "s", j.path("waitReason").asText());
        }
        out.println(pool.path("pendingCount").asInt() + " queued, " + pool.path("runningCount").asInt() + " running (policy " + pool.path("policy").asText() + ")");
        if (pool.path("queue").size() > 0) out.print(table.render());
        out.flush();
        return 0;
    }
}
