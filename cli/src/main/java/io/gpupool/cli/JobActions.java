package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.model.SpecException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Slurm's scontrol hold / release / requeue / update on a gpupool server's jobs. */
public final class JobActions {
    private JobActions() {}

    /** One call on one job, then a line with its state and why it waits. */
    abstract static class OnJob extends ClientCommand {
        @Parameters(paramLabel = "JOB", description = "Job id, e.g. j42 (an array's task: j12_3; an array's id: each of its queued tasks).")
        String id;

        abstract String action();

        @Override
        public Integer call() {
            JsonNode j = api().post("/api/v1/jobs/" + id + "/" + action(), Map.of(), null);
            print(j);
            return 0;
        }

        void print(JsonNode j) {
            if (j.path("array").isTextual()) {   // an array's id: the action applied to each of its tasks it fits
                out().println(j.path("array").asText() + ": " + j.path("tasks").asInt() + " tasks " + (action().equals("hold") ? "held" : action() + "d"));
                out().flush();
                return;
            }
            out().println(j.path("id").asText() + " " + j.path("state").asText()
                    + (j.path("waitReason").isNull() || j.path("waitReason").isMissingNode() ? "" : " (" + j.path("waitReason").asText() + ")"));
            out().flush();
        }
    }

    @Command(name = "hold", description = "Keep a queued job from starting until it is released (it keeps its place in the queue).")
    public static final class Hold extends OnJob {
        @Override String action() { return "hold"; }
    }

    @Command(name = "release", description = "Release a held job.")
    public static final class Release extends OnJob {
        @Override String action() { return "release"; }
    }

    @Command(name = "requeue", description = "Stop a running job and queue it again (it runs again as its next attempt).")
    public static final class Requeue extends OnJob {
        @Override String action() { return "requeue"; }
    }

    @Command(name = "update", description = "Change a queued job's priority, allowed GPU models, time limit or dependency, e.g. gpupool update j42 --priority 10 --time 2:00:00.")
    public static final class Update extends OnJob {
        @Option(names = "--priority", paramLabel = "P", description = "New priority.")
        Integer priority;
        @Option(names = "--gpu-type", paramLabel = "MODEL", split = ",", description = "Allowed GPU models (repeatable or comma-separated); 'any' allows every model.")
        List<String> gpuTypes;
        @Option(names = "--dependency", paramLabel = "DEPS", description = "New dependency (as submit --dependency); '' waits for nothing.")
        String dependency;
        @Option(names = "--kill-on-invalid-dep", paramLabel = "yes|no", description = "With --dependency: fail the job when it can never be met (yes, default) or keep it held (no).")
        String killOnInvalidDep;
        @Option(names = {"-t", "--time"}, paramLabel = "LIMIT", description = "New time limit (as submit --time; the tenant's maximum holds); 'none': "
                + "none of its own (the tenant's default applies).")
        String time;

        @Override String action() { return "update"; }

        @Override
        public Integer call() {
            Map<String, Object> body = new LinkedHashMap<>();
            if (priority != null) body.put("priority", priority);
            if (gpuTypes != null) body.put("gpuTypes", gpuTypes.equals(List.of("any")) ? List.of() : gpuTypes);
            if (dependency != null) body.put("dependency", dependency);
            if (killOnInvalidDep != null) body.put("killOnInvalidDep", SubmitCommand.yesNo(killOnInvalidDep));
            if (time != null) {
                body.put("timeLimit", time.equals("none") ? null : io.gpupool.model.TimeLimit.format(io.gpupool.model.TimeLimit.parseSeconds("--time", "time", time)));
            }
            if (body.isEmpty()) throw new SpecException("update", "options", "give --priority, --gpu-type, --time or --dependency");
            print(api().patch("/api/v1/jobs/" + id, body));
            return 0;
        }
    }
}
