package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;

/** Shows one job: state, why it waits or where it runs, and its history. */
@Command(name = "status", description = "Show a job of a gpupool server: state, reason for waiting or GPUs, history.")
public final class StatusCommand extends ClientCommand {
    @Parameters(paramLabel = "JOB", description = "Job id, e.g. j42; a job array's id (j12) or one of its tasks (j12_3).")
    String id;
    @Option(names = "--output", defaultValue = "text", paramLabel = "FORMAT", description = "text or json (default: ${DEFAULT-VALUE}).")
    String output;

    @Override
    public Integer call() {
        ApiClient api = api();
        JsonNode j = api.get("/api/v1/jobs/" + id);
        PrintWriter out = out();
        if (output.equals("json")) {
            Json.print(out, j);
            return 0;
        }
        if (j.has("counts")) {
            printArray(out, j);
            return 0;
        }
        out.printf("%s  %s  tenant %s  %s%n", j.path("id").asText(), j.path("state").asText(), j.path("tenant").asText(), j.path("name").asText());
        out.printf("asks     %d GPU(s)%s%s%n", j.path("numGpus").asInt(),
                j.path("gpuMilli").asInt() < 1000 ? ", " + j.path("gpuMilli").asInt() / 10 + "% compute" : "",
                j.path("gpuMemMib").asLong() > 0 ? ", " + j.path("gpuMemMib").asLong() + " MiB" : "");
        if (j.has("timeLimit")) out.println("limit    " + j.path("timeLimit").asText());
        if (!j.path("waitReason").isNull()) out.println("waits    " + j.path("waitReason").asText());
        for (JsonNode g : j.path("allocation")) {
            out.printf("runs on  %s GPU %d (%s)%n", g.path("node").asText(), g.path("gpu").asInt(),
                    g.path("exclusive").asBoolean() ? "whole" : g.path("milli").asInt() / 10 + "%, " + g.path("memoryMib").asLong() + " MiB");
        }
        if (!j.path("message").isNull()) out.println("message  " + j.path("message").asText());
        for (JsonNode e : api.get("/api/v1/jobs/" + id + "/events").path("events")) {
            out.printf("  %tT %-10s %s%n", e.path("atMs").asLong(), e.path("type").asText(), e.path("detail").asText());
        }
        return 0;
    }

    private static void printArray(PrintWriter out, JsonNode a) {
        out.printf("%s  %s  tenant %s  %s%n", a.path("id").asText(), a.path("state").asText(), a.path("tenant").asText(), a.path("name").asText());
        out.printf("array    %d tasks%s, first %s%n", a.path("tasks").asLong(),
                a.path("cap").asInt() > 0 ? ", at most " + a.path("cap").asInt() + " at once" : "", a.path("firstTask").asText());
        StringBuilder counts = new StringBuilder();
        a.path("counts").properties().forEach(e -> counts.append(counts.isEmpty() ? "" : ", ").append(e.getValue().asLong()).append(' ')
                .append(e.getKey().toLowerCase(java.util.Locale.ROOT)));
        out.println("tasks    " + counts);
    }
}
