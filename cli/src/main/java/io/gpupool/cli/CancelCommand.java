package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;


/** Cancels a pending or running job. */
@Command(name = "cancel", description = "Cancel a pending or running job on a gpupool server.")
public final class CancelCommand extends ClientCommand {
    @Parameters(paramLabel = "JOB", description = "Job id, e.g. j42.")
    String id;

    @Override
    public Integer call() {
        JsonNode j = api().delete("/api/v1/jobs/" + id);
        out().println("cancelled " + j.path("id").asText() + " (" + j.path("state").asText() + ")");
        return 0;
    }
}
