package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;


/** Cancels a pending or running job. */
@Command(name = "cancel", description = "Cancel a pending or running job on a gpupool server.")
public final class CancelCommand extends ClientCommand {
    @Parameters(paramLabel = "JOB", description = "Job id, e.g. j42; a job array's id (j12: all its active tasks) or one task (j12_3).")
    String id;

    @Override
    public Integer call() {
        JsonNode j = api().delete("/api/v1/jobs/" + id);
        if (j.has("cancelled")) out().println("cancelled " + j.path("cancelled").asInt() + " tasks of array " + j.path("id").asText());
        else out().println("cancelled " + j.path("id").asText() + " (" + j.path("state").asText() + ")");
        return 0;
    }
}
