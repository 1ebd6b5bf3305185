package io.gpupool.sim.trace;

import io.gpupool.engine.reservation.ReservationRequest;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuModel;
import io.gpupool.model.SpecException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Advance reservations for a replay ({@code simulate --reservations FILE}): a CSV with a header and one reservation per
 * row, {@code tenant,start,end} and either {@code gpus,model} or {@code nodes} (node names separated by {@code |}),
 * optionally {@code name} (default {@code r} and the line number). Times are seconds on the trace's clock. Columns in any
 * order, matched without regard to case; a bad row is reported with file:line and column.
 */
public final class ReservationsFile {
    /** One reservation and where it was read (file:line), for errors when the replay makes it. */
    public record Entry(String where, ReservationRequest request) {}

    private ReservationsFile() {}

    public static List<Entry> read(Path file, GpuCatalog catalog) {
        if (!Files.isRegularFile(file)) throw new SpecException("--reservations", "reservations", "no such file: " + file);
        String name = file.toString();
        List<Entry> out = new ArrayList<>();
        try (MappedLines lines = new MappedLines(file)) {
            String header = lines.lineAt(lines.start());
            if (header == null || header.isBlank()) {
                throw new SpecException(name + ":1", null, "empty reservations file: a header tenant,gpus,model,start,end (or nodes instead of gpus,model) is required");
            }
            Columns columns = new Columns(header, name + ":1");
            columns.require("tenant", "start", "end");
            int lineNo = 1;
            for (String text; (text = lines.lineAt(lines.nextOffset())) != null; ) {
                lineNo++;
                if (text.isBlank()) continue;
                Row row = new Row(name, lineNo, Row.split(text), columns);
                String rName = row.optional("name");
                if (rName == null || rName.isBlank()) rName = "r" + lineNo;
                String tenant = row.required("tenant");
                long start = Math.round(row.number("start", 0, 1e12) * 1000);
                long end = Math.round(row.number("end", 0, 1e12) * 1000);
                String nodes = row.optional("nodes");
                ReservationRequest q;
                if (nodes != null && !nodes.isBlank()) {
                    if (row.optional("gpus") != null && !row.optional("gpus").isBlank()) throw row.error("nodes", "give either nodes or gpus and model, not both");
                    q = ReservationRequest.ofNodes(rName, tenant, start, end, Arrays.stream(nodes.split("\\|")).map(String::trim).toList());
                } else {
                    int gpus = (int) row.integer("gpus", 1, 1_000_000);
                    String code = row.required("model");
                    GpuModel model = catalog.find(code).orElseThrow(() -> row.error("model", "unknown GPU model '" + code + "'; see 'gpupool catalog'"));
                    q = ReservationRequest.ofModel(rName, tenant, start, end, gpus, model.id());
                }
                out.add(new Entry(row.where(), q));
            }
        }
        return out;
    }
}
