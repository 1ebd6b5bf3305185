package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.model.SpecException;
import io.gpupool.model.TimeLimit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Submits a job to a running service. */
@Command(name = "submit", description = "Submit a job to a gpupool server, e.g. gpupool submit --gpus 1 --milli 500 --mem 20000 -- python train.py")
public final class SubmitCommand extends ClientCommand {

    @Option(names = "--gpus", defaultValue = "1", paramLabel = "N", description = "GPUs (default: ${DEFAULT-VALUE}).")
    int gpus;
    @Option(names = "--milli", paramLabel = "M", description = "Compute share per GPU in thousandths (1..1000); fractional shares need --gpus 1.")
    Integer milli;
    @Option(names = "--mem", paramLabel = "MIB", description = "GPU memory per GPU in MiB.")
    Long memMib;
    @Option(names = "--gpu-type", paramLabel = "MODEL", description = "Allowed GPU model (repeatable), e.g. A100-80GB.")
    List<String> gpuTypes = new ArrayList<>();
    @Option(names = "--cpu", paramLabel = "MILLI", description = "Host CPU each replica needs on its node, in thousandths of a core (1500 = 1.5 cores).")
    Long cpuMilli;
    @Option(names = "--host-mem", paramLabel = "MIB", description = "Host RAM each replica needs on its node, in MiB.")
    Long hostMemMib;
    @Option(names = "--name", paramLabel = "NAME", description = "Job name.")
    String name;
    @Option(names = "--tenant", paramLabel = "T", description = "Tenant (admin tokens only; a member's token implies it).")
    String tenant;
    @Option(names = "--priority", paramLabel = "P", description = "Priority (larger runs first under the priority policy).")
    Integer priority;
    @Option(names = "--estimate", paramLabel = "SEC", description = "Expected run time in seconds (helps backfill).")
    Long estimateSec;
    @Option(names = {"-t", "--time"}, paramLabel = "LIMIT", description = "Time limit, as Slurm's --time: MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, "
            + "DAYS-HOURS, DAYS-HOURS:MINUTES or DAYS-HOURS:MINUTES:SECONDS. At the limit the job gets SIGTERM, then SIGKILL after the agent's grace, "
            + "and ends as TIMEOUT (default: the tenant's default limit, if any).")
    String time;
    @Option(names = "--env", paramLabel = "K=V", description = "Environment variable for the job (repeatable).")
    Map<String, String> env = new LinkedHashMap<>();
    @Option(names = "--work-dir", paramLabel = "DIR", description = "Absolute directory the command runs in on its node (default: a fresh one per attempt).")
    String workDir;
    @Option(names = "--restart-policy", paramLabel = "POLICY",
            description = "When a run is lost (its node lost, its process gone): requeue (a new attempt) or fail (default: requeue).")
    String restartPolicy;
    @Option(names = "--idempotency-key", paramLabel = "KEY", description = "Retrying with the same key returns the same job instead of a second one (default: a new random key, so the client's own "
                    + "retries, e.g. to another replica, never submit twice).")
    String idempotencyKey;
    @Option(names = "--output", defaultValue = "text", paramLabel = "FORMAT", description = "text or json (default: ${DEFAULT-VALUE}).")
    String output;
    @Parameters(paramLabel = "COMMAND", arity = "1..*", description = "The program and its arguments (after --).")
    List<String> command;

    @Override
    public Integer call() {
        if (!List.of("text", "json").contains(output)) throw new SpecException("--output", "output", "must be text or json");
        Map<String, Object> body = new LinkedHashMap<>();
        if (name != null) body.put("name", name);
        if (tenant != null) body.put("tenant", tenant);
        body.put("numGpus", gpus);
        if (milli != null) body.put("gpuMilli", milli);
        if (memMib != null) body.put("gpuMemMib", memMib);
        if (!gpuTypes.isEmpty()) body.put("gpuTypes", gpuTypes);
        if (cpuMilli != null) body.put("cpuMilli", cpuMilli);
        if (hostMemMib != null) body.put("hostMemMib", hostMemMib);
        if (priority != null) body.put("priority", priority);
        if (estimateSec != null) body.put("estimateSec", estimateSec);
        if (time != null) body.put("timeLimit", TimeLimit.format(TimeLimit.parseSeconds("--time", "time", time)));
        body.put("command", command);
        if (!env.isEmpty()) body.put("env", env);
        if (workDir != null) body.put("workDir", workDir);
        if (restartPolicy != null) body.put("restartPolicy", restartPolicy);
        JsonNode job = api().post("/api/v1/jobs", body, idempotencyKey != null ? idempotencyKey : "cli-" + java.util.UUID.randomUUID());
        if (output.equals("json")) Json.print(out(), job);
        else out().println("submitted " + job.path("id").asText() + " (" + job.path("state").asText() + ") for tenant "
                + job.path("tenant").asText());
        return 0;
    }
}
