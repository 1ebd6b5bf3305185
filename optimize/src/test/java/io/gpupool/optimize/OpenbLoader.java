package io.gpupool.optimize;

import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.sim.trace.TraceJob;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A minimal reader of the Alibaba openb lists (node list and pod list) for the batch-mode comparison. The
 * simulator's own openb reader was not on a compiling branch when this was written; this one reads only
 * what the comparison needs and trusts the shared files (no bad-input reporting).
 */
final class OpenbLoader {
    private OpenbLoader() {}

    /** The openb lists: {@code $GPUPOOL_TRACES/alibaba-openb}, else {@code ../shared/traces/alibaba-openb} beside the checkout. */
    static Path traces() {
        String env = System.getenv("GPUPOOL_TRACES");
        Path root = env != null && !env.isBlank() ? Path.of(env)
                : Path.of(System.getProperty("gpupool.repo.root", ".")).resolve("../shared/traces");
        return root.resolve("alibaba-openb").toAbsolutePath().normalize();
    }

    /** Skips the calling test, with a line naming the path and where to get the traces, where {@code file} is absent. */
    static Path require(Path file) {
        if (!Files.isRegularFile(file)) {
            String why = "skipped: " + file + " not found; download the public traces (docs/traces.md, \"Getting the real traces\") and set "
                    + "GPUPOOL_TRACES to their folder (default: ../shared/traces beside the checkout)";
            System.err.println("gpupool: " + why);
            org.junit.jupiter.api.Assumptions.abort(why);
        }
        return file;
    }

    static ClusterSpec nodes(Path file) throws IOException {
        GpuCatalog catalog = GpuCatalog.standard();
        List<NodeSpec> nodes = new ArrayList<>();
        for (Map<String, String> row : rows(file)) {
            int gpus = Integer.parseInt(row.get("gpu"));
            if (gpus == 0) continue;
            GpuModel m = catalog.require(row.get("model"), file + " model");
            List<GpuDevice> devs = new ArrayList<>();
            for (int g = 0; g < gpus; g++) devs.add(new GpuDevice(g, row.get("sn") + "-" + g, m, true));
            nodes.add(new NodeSpec(row.get("sn"), devs, Long.parseLong(row.get("cpu_milli")), Long.parseLong(row.get("memory_mib")),
                    GpuCatalog.defaultNvlinkDomains(m, gpus), 1.0, NodeSpec.DEFAULT_SPLIT_COUNT, Map.of()));
        }
        return new ClusterSpec(nodes);
    }

    /** GPU pods in list order, all submitted at {@code submitMs}, running for deletion - creation seconds. */
    static List<TraceJob> pods(Path file, long submitMs) throws IOException {
        GpuCatalog catalog = GpuCatalog.standard();
        List<TraceJob> jobs = new ArrayList<>();
        for (Map<String, String> row : rows(file)) {
            int gpus = Integer.parseInt(row.get("num_gpu"));
            if (gpus == 0) continue;
            int milli = Integer.parseInt(row.get("gpu_milli"));
            Set<String> models = new LinkedHashSet<>();
            for (String t : row.get("gpu_spec").split("\\|")) if (!t.isBlank()) models.add(catalog.require(t, file + " gpu_spec").id());
            JobSpec.Builder b = JobSpec.builder(row.get("name")).submitMs(submitMs).gpus(gpus).allowedModels(models);
            if (gpus == 1 && milli < GpuShare.WHOLE) b.share(new GpuShare(milli, 0));
            long seconds = Math.max(1, Long.parseLong(row.get("deletion_time")) - Long.parseLong(row.get("creation_time")));
            jobs.add(new TraceJob(b.build(), seconds * 1000));
        }
        return jobs;
    }

    private static List<Map<String, String>> rows(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file);
        String[] header = lines.getFirst().split(",", -1);
        List<Map<String, String>> out = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            if (line.isBlank()) continue;
            String[] f = line.split(",", -1);
            Map<String, String> row = new HashMap<>();
            for (int i = 0; i < header.length; i++) row.put(header[i], i < f.length ? f[i] : "");
            out.add(row);
        }
        return out;
    }
}
