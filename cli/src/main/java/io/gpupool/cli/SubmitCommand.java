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
    @Option(names = "--user", paramLabel = "USER", description = "Who the job is for, within its tenant (usage is reported by it: gpupool usage --by user).")
    String user;
    @Option(names = "--priority", paramLabel = "P", description = "Priority (larger runs first under the priority policy).")
    Integer priority;
    @Option(names = "--estimate", paramLabel = "SEC", description = "Expected run time in seconds (helps backfill).")
    Long estimateSec;
    @Option(names = {"-t", "--time"}, paramLabel = "LIMIT", description = "Time limit, as Slurm's --time: MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, "
            + "DAYS-HOURS, DAYS-HOURS:MINUTES or DAYS-HOURS:MINUTES:SECONDS. At the limit the job gets SIGTERM, then SIGKILL after the agent's grace, "
            + "and ends as TIMEOUT (default: the tenant's default limit, if any).")
    String time;
    @Option(names = "--reservation", paramLabel = "NAME", description = "Run in this advance reservation of the job's tenant: only on its GPUs, "
            + "only inside its window (as Slurm's --reservation).")
    String reservation;
    @Option(names = "--env", paramLabel = "K=V", description = "Environment variable for the job (repeatable).")
    Map<String, String> env = new LinkedHashMap<>();
    @Option(names = "--work-dir", paramLabel = "DIR", description = "Absolute directory the command runs in on its node (default: a fresh one per attempt).")
    String workDir;
    @Option(names = "--restart-policy", paramLabel = "POLICY",
            description = "When a run is lost (its node lost, its process gone): requeue (a new attempt) or fail (default: requeue).")
    String restartPolicy;
    @Option(names = "--array", paramLabel = "SPEC", description = "Submit a job array, one task per index (Slurm's syntax): 0-199, 1,3,5, 0-15:4; "
            + "%%N after it runs at most N at once (0-199%%16). Each task gets GPUPOOL_ARRAY_JOB_ID and GPUPOOL_ARRAY_TASK_ID.")
    String array;
    @Option(names = "--dependency", paramLabel = "DEPS", description = "Start only after other jobs (Slurm's syntax): afterok:ID[:ID...], afterany:..., "
            + "afternotok:..., after:... (started), singleton; comma-separated. An ID is a job, an array (all its tasks) or a task (j12_3).")
    String dependency;
    @Option(names = "--kill-on-invalid-dep", paramLabel = "yes|no", description = "A dependency that can never be met fails the job (yes, default) or keeps it queued, held (no).")
    String killOnInvalidDep;
    @Option(names = "--idempotency-key", paramLabel = "KEY", description = "Retrying with the same key returns the same job instead of a second one (default: a new random key, so the client's own "
                    + "retries, e.g. to another replica, never submit twice).")
    String idempotencyKey;
    @Option(names = "--output", defaultValue = "text", paramLabel = "FORMAT", description = "text or json (default: ${DEFAULT-VALUE}).")
    String output;
    @Parameters(paramLabel = "COMMAND", arity = "1..*", description = "The program and its arguments (after --).")
    List<String> command;

    static boolean yesNo(String v) {
        return switch (v.toLowerCase(java.util.Locale.ROOT)) {
            case "yes", "true" -> true;
            case "no", "false" -> false;
            default -> throw new SpecException("--kill-on-invalid-dep", "kill-on-invalid-dep", "must be yes or no, got '" + v + "'");
        };
    }

    @Override
    public Integer call() {
        if (!List.of("text", "json").contains(output)) throw new SpecException("--output", "output", "must be text or json");
        Map<String, Object> body = new LinkedHashMap<>();
        if (name != null) body.put("name", name);
        if (tenant != null) body.put("tenant", tenant);
        if (user != null) body.put("user", user);
        body.put("numGpus", gpus);
        if (milli != null) body.put("gpuMilli", milli);
        if (memMib != null) body.put("gpuMemMib", memMib);
        if (!gpuTypes.isEmpty()) body.put("gpuTypes", gpuTypes);
        if (cpuMilli != null) body.put("cpuMilli", cpuMilli);
        if (hostMemMib != null) body.put("hostMemMib", hostMemMib);
        if (priority != null) body.put("priority", priority);
        if (estimateSec != null) body.put("estimateSec", estimateSec);
        if (time != null) body.put("timeLimit", TimeLimit.format(TimeLimit.parseSeconds("--time", "time", time)));
        if (reservation != null) body.put("reservation", reservation);
        body.put("command", command);
        if (!env.isEmpty()) body.put("env", env);
        if (workDir != null) body.put("workDir", workDir);
        if (restartPolicy != null) body.put("restartPolicy", restartPolicy);
        if (array != null) body.put("array", array);
        if (dependency != null) body.put("dependency", dependency);
        if (killOnInvalidDep != null) body.put("killOnInvalidDep", yesNo(killOnInvalidDep));
        JsonNode job = api().post("/api/v1/jobs", body, idempotencyKey != null ? idempotencyKey : "cli-" + java.util.UUID.randomUUID());
        if (output.equals("json")) Json.print(out(), job);
        else if (array != null) out().println("submitted array " + job.path("id").asText() + " (" + job.path("tasks").asLong() + " tasks"
                + (job.path("cap").asInt() > 0 ? ", at most " + job.path("cap").asInt() + " at once" : "") + ") for tenant " + job.path("tenant").asText());
        else out().println("submitted " + job.path("id").asText() + " (" + job.path("state").asText() + ") for tenant "
                + job.path("tenant").asText());
        return 0;
    }
}
