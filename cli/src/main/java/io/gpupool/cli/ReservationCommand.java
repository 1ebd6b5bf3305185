package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.model.SpecException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Advance reservations (Slurm's scontrol create/show/delete reservation) on a gpupool server. */
@Command(name = "reservation", description = "Reserve GPUs for a tenant over a time window: inside it only the tenant's jobs use them; before it only "
        + "jobs whose time limit ends before it starts. create and delete need an admin token.",
        subcommands = {ReservationCommand.Create.class, ReservationCommand.ListAll.class, ReservationCommand.Delete.class})
public final class ReservationCommand {
    private ReservationCommand() {}

    @Command(name = "create", description = "Reserve --gpus N of --model, or every GPU of --nodes, for --tenant from --start to --end, "
            + "e.g. gpupool reservation create --tenant vision --gpus 16 --model H100-80GB --start 2026-12-24T09:00:00Z --end +2d. "
            + "Refused, naming the option, when it cannot be honoured.")
    public static final class Create extends ClientCommand {
        @Option(names = "--name", paramLabel = "NAME", description = "Its name (default: TENANT-N).")
        String name;
        @Option(names = "--tenant", required = true, paramLabel = "T", description = "The tenant the GPUs are reserved for.")
        String tenant;
        @Option(names = "--gpus", paramLabel = "N", description = "How many GPUs of --model.")
        Integer gpus;
        @Option(names = "--model", paramLabel = "MODEL", description = "The GPU model (as `gpupool catalog` names it).")
        String model;
        @Option(names = "--nodes", paramLabel = "N1,N2", split = ",", description = "Reserve every GPU of these nodes instead.")
        List<String> nodes;
        @Option(names = "--start", required = true, paramLabel = "WHEN", description = "now, +N with s, m, h or d (+2h), an ISO-8601 instant "
                + "(2026-12-24T09:00:00Z) or epoch milliseconds.")
        String start;
        @Option(names = "--end", required = true, paramLabel = "WHEN", description = "As --start (a +N counts from now, not from the start).")
        String end;
        @Option(names = "--ignore-running-jobs", description = "Reserve even where other tenants' running jobs will still hold GPUs at the start "
                + "(it is honoured there once they end; they are named).")
        boolean ignoreRunningJobs;

        @Override
        public Integer call() {
            if ((nodes == null) == (gpus == null)) throw new SpecException("reservation create", "gpus", "give --gpus N --model MODEL, or --nodes");
            Map<String, Object> body = new LinkedHashMap<>();
            if (name != null) body.put("name", name);
            body.put("tenant", tenant);
            if (gpus != null) body.put("gpus", gpus);
            if (model != null) body.put("model", model);
            if (nodes != null) body.put("nodes", nodes);
            body.put("start", when(start));
            body.put("end", when(end));
            if (ignoreRunningJobs) body.put("ignoreRunningJobs", true);
            JsonNode r = api().post("/api/v1/reservations", body, null);
            PrintWriter out = out();
            out.println("reserved " + r.path("name").asText() + ": " + r.path("gpus").asInt() + " GPUs for tenant " + r.path("tenant").asText()
                    + " from " + r.path("start").asText() + " to " + r.path("end").asText() + " (" + String.join(", ", texts(r.path("gpuList"))) + ")");
            if (!r.path("notHonouredUntilEnd").isEmpty()) {
                out.println("not honoured on some of its GPUs until these running jobs end: " + String.join(", ", texts(r.path("notHonouredUntilEnd"))));
            }
            out.flush();
            return 0;
        }

        /** Epoch milliseconds go as a number, the rest as the server reads it. */
        private static Object when(String v) {
            return v.matches("\\d{1,15}") ? (Object) Long.parseLong(v) : v;
        }
    }

    @Command(name = "list", description = "The reservations: name, tenant, GPUs, window.")
    public static final class ListAll extends ClientCommand {
        @Option(names = "--output", paramLabel = "FORMAT", description = "table (default) or json.")
        String output = "table";

        @Override
        public Integer call() {
            JsonNode all = api().get("/api/v1/reservations");
            PrintWriter out = out();
            if (output.equals("json")) {
                out.println(all.toPrettyString());
            } else if (output.equals("table")) {
                TextTable t = new TextTable("name", "tenant", "gpus", "model/nodes", "start", "end").alignRight(2);
                for (JsonNode r : all.path("reservations")) {
                    t.row(r.path("name").asText(), r.path("tenant").asText(), r.path("gpus").asInt(),
                            r.path("model").isNull() ? String.join(",", texts(r.path("nodes"))) : r.path("model").asText(),
                            r.path("start").asText(), r.path("end").asText());
                }
                out.print(t.render());
            } else {
                throw new SpecException("reservation list", "output", "must be table or json, got '" + output + "'");
            }
            out.flush();
            return 0;
        }
    }

    @Command(name = "delete", description = "Delete a reservation (jobs running in it keep running).")
    public static final class Delete extends ClientCommand {
        @Parameters(paramLabel = "NAME", description = "The reservation.")
        String name;

        @Override
        public Integer call() {
            api().delete("/api/v1/reservations/" + name);
            out().println("deleted reservation " + name);
            out().flush();
            return 0;
        }
    }

    private static List<String> texts(JsonNode array) {
        List<String> out = new java.util.ArrayList<>();
        for (JsonNode n : array) out.add(n.asText());
        return out;
    }
}
