package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpupool.model.SpecException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;

/** GET /api/v1/history: the server's finished jobs of a window as a gpupool trace CSV (docs/contracts.md, "History"). */
@Command(name = "export", description = {"Write a gpupool server's finished jobs submitted in a window as a gpupool trace CSV: tenant, GPUs, share, "
        + "models, run time, array and time limit of each, and what happened to it (recorded_state, recorded_start, recorded_end, recorded_wait, "
        + "recorded_runs). A member token exports its own tenant's jobs.",
        "Replay it with: gpupool simulate --history FILE --pool POOL.json --policy P1,P2,..."})
public final class HistoryExportCommand extends ClientCommand {
    @Option(names = "--since", paramLabel = "WHEN", description = "Jobs submitted from: an age (30d, 12h, 90m), a date (2026-12-01, UTC), an ISO-8601 "
            + "instant or epoch milliseconds (default: 30 days before --until).")
    String since;
    @Option(names = "--until", paramLabel = "WHEN", description = "Jobs submitted before, in the same forms (default: now).")
    String until;
    @Option(names = "--tenant", paramLabel = "NAME", description = "Only this tenant's jobs (admin tokens; a member token exports only its own).")
    String tenant;
    @Option(names = "--output", paramLabel = "FILE", description = "Write the CSV to FILE (default: stdout).")
    Path output;
    @Option(names = "--pool", paramLabel = "FILE", description = "Also write the server's nodes and configuration (JSON), for simulate --history FILE --pool FILE.")
    Path pool;
    @Mixin Notes notes;

    @Override
    public Integer call() {
        JsonNode r = HistorySource.fetch(api(), since, until, tenant);
        String csv = r.path("trace").asText();
        if (output == null) {
            PrintWriter out = out();
            out.print(csv);
            out.flush();
        } else {
            write(output, csv);
        }
        if (pool != null) {
            ObjectNode p = Json.MAPPER.createObjectNode();
            p.put("policy", r.path("policy").asText());
            p.set("config", r.path("config"));
            p.set("nodes", r.path("nodes"));
            write(pool, p.toPrettyString() + "\n");
        }
        notes.say(HistorySource.summary(r));
        return 0;
    }

    private static void write(Path file, String text) {
        try {
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new SpecException(file.toString(), null, "cannot be written: " + e.getMessage());
        }
    }
}
