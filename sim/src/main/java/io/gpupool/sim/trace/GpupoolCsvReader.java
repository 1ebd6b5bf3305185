package io.gpupool.sim.trace;

import io.gpupool.model.GangShape;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Reads the gpupool trace CSV of DESIGN.md: a header row, then
 * {@code job_id,submit_time,duration,num_gpus} (seconds) and optional {@code gpu_milli, gpu_mem_mib,
 * gpu_type (A|B), tenant, user, priority, name}, plus gpupool's own {@code replicas, preemptible,
 * estimate}. Unknown columns are ignored; rows may come in any order. Every error names file:line,
 * the column and the rule, and nothing is returned from a file with an error.
 */
public final class GpupoolCsvReader {
    private static final List<String> REQUIRED = List.of("job_id", "submit_time", "duration", "num_gpus");

    private GpupoolCsvReader() {}

    public static List<TraceJob> read(Path file, GpuCatalog catalog, int maxGpusPerReplica) {
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            return read(in, file.toString(), catalog, maxGpusPerReplica);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read trace " + file + ": " + e.getMessage(), e);
        }
    }

    public static List<TraceJob> read(BufferedReader in, String name, GpuCatalog catalog, int maxGpusPerReplica) throws IOException {
        String header = in.readLine();
        if (header == null) throw new SpecException(name + ":1", null, "empty trace: a header row with " + String.join(",", REQUIRED) + " is required");
        Map<String, Integer> col = new HashMap<>();
        String[] h = splitCsv(stripBom(header));
        for (int i = 0; i < h.length; i++) col.put(h[i].trim().toLowerCase(Locale.ROOT), i);
        for (String r : REQUIRED) {
            if (!col.containsKey(r)) throw new SpecException(name + ":1", r, "required column missing; header is '" + header + "'");
        }
        List<TraceJob> jobs = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        String line;
        int lineNo = 1;
        while ((line = in.readLine()) != null) {
            lineNo++;
            if (line.isBlank()) continue;
            String where = name + ":" + lineNo;
            String[] f = splitCsv(line);
            Row row = new Row(where, f, col);
            String id = row.required("job_id");
            if (!ids.add(id)) throw new SpecException(where, "job_id", "duplicate job id '" + id + "'");
            double submit = row.number("submit_time", 0, Double.MAX_VALUE);
            double duration = row.number("duration", 1e-3, Double.MAX_VALUE);
            int numGpus = (int) row.integer("num_gpus", 1, 1_000_000);
            int milli = (int) row.optionalInteger("gpu_milli", 1, 1000, 1000);
            long mem = row.optionalInteger("gpu_mem_mib", 0, Long.MAX_VALUE / 2, 0);
            int replicas = (int) row.optionalInteger("replicas", 1, numGpus, 0);
            GangShape shape;
            if (replicas > 0) {
                if (numGpus % replicas != 0) throw new SpecException(where, "replicas", "num_gpus " + numGpus + " is not a multiple of replicas " + replicas);
                shape = new GangShape(replicas, numGpus / replicas);
            } else {
                shape = GangShape.forGpuCount(numGpus, maxGpusPerReplica);
            }
            if ((milli < 1000 || mem > 0) && numGpus != 1) {
                throw new SpecException(where, "gpu_milli", "a GPU share (gpu_milli < 1000 or gpu_mem_mib) needs num_gpus = 1, got " + numGpus);
            }
            Set<String> models = new LinkedHashSet<>();
            String types = row.optional("gpu_type");
            if (types != null) {
                for (String t : types.split("\\|")) {
                    if (!t.isBlank()) models.add(catalog.require(t.trim(), where + " column gpu_type").id());
                }
            }
            JobSpec.Builder b = JobSpec.builder(id)
                    .submitMs(Math.round(submit * 1000))
                    .shape(shape)
                    .share(new GpuShare(milli, mem))
                    .allowedModels(models);
            String tenant = row.optional("tenant");
            if (tenant != null) b.tenant(tenant);
            String user = row.optional("user");
            if (user != null) b.user(user);
            String jobName = row.optional("name");
            if (jobName != null) b.name(jobName);
            b.priority((int) row.optionalInteger("priority", Integer.MIN_VALUE, Integer.MAX_VALUE, 0));
            String pre = row.optional("preemptible");
            if (pre != null) b.preemptible(row.bool("preemptible", pre));
            if (row.optional("estimate") != null) b.estimateMs(Math.round(row.number("estimate", 1e-3, Double.MAX_VALUE) * 1000));
            try {
                jobs.add(new TraceJob(b.build(), Math.max(1, Math.round(duration * 1000))));
            } catch (SpecException e) {
                throw new SpecException(where, e.field(), e.getMessage().replaceFirst("^job [^:]*: (field '[^']*': )?", ""));
            }
        }
        return jobs;
    }

    private static String stripBom(String s) {
        return !s.isEmpty() && s.charAt(0) == '\uFEFF' ? s.substring(1) : s;
    }

    /** Splits one CSV line (RFC 4180 quotes, no embedded newlines). */
    static String[] splitCsv(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') { cur.append('"'); i++; }
                else if (c == '"') quoted = false;
                else cur.append(c);
            } else if (c == '"') quoted = true;
            else if (c == ',') { out.add(cur.toString()); cur.setLength(0); }
            else cur.append(c);
        }
        out.add(cur.toString());
        return out.toArray(String[]::new);
    }

    /** One data row with typed, checked access by column name. */
    private record Row(String where, String[] fields, Map<String, Integer> col) {
        String optional(String c) {
            Integer i = col.get(c);
            if (i == null || i >= fields.length) return null;
            String v = fields[i].trim();
            return v.isEmpty() ? null : v;
        }

        String required(String c) {
            String v = optional(c);
            if (v == null) throw new SpecException(where, c, "required value is empty");
            return v;
        }

        double number(String c, double min, double max) {
            String v = required(c);
            double d;
            try {
                d = Double.parseDouble(v);
            } catch (NumberFormatException e) {
                throw new SpecException(where, c, "must be a number, got '" + v + "'");
            }
            if (!(d >= min && d <= max)) throw new SpecException(where, c, "must be >= " + fmt(min) + ", got " + v);
            return d;
        }

        long integer(String c, long min, long max) {
            return parseInt(c, required(c), min, max);
        }

        long optionalInteger(String c, long min, long max, long dflt) {
            String v = optional(c);
            return v == null ? dflt : parseInt(c, v, min, max);
        }

        long parseInt(String c, String v, long min, long max) {
            long n;
            try {
                n = Long.parseLong(v);
            } catch (NumberFormatException e) {
                throw new SpecException(where, c, "must be an integer, got '" + v + "'");
            }
            if (n < min || n > max) throw new SpecException(where, c, "must be in " + min + ".." + max + ", got " + v);
            return n;
        }

        boolean bool(String c, String v) {
            return switch (v.toLowerCase(Locale.ROOT)) {
                case "true", "1", "yes" -> true;
                case "false", "0", "no" -> false;
                default -> throw new SpecException(where, c, "must be true or false, got '" + v + "'");
            };
        }

        private static String fmt(double d) {
            return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
        }
    }
}
