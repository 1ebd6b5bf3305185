package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.util.concurrent.Callable;

/** Cancels a pending or running job. */
@Command(name = "cancel", description = "Cancel a pending or running job on a gpupool server.")
public final class CancelCommand implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin ClientOptions client;
    @Parameters(paramLabel = "JOB", description = "Job id, e.g. j42.")
    String id;

    @Override
    public Integer call() {
        JsonNode j = client.client().delete("/api/v1/jobs/" + id);
        spec.commandLine().getOut().println("cancelled " + j.path("id").asText() + " (" + j.path("state").asText() + ")");
        return 0;
    }
}
