package io.gpupool.sim.trace;

import io.gpupool.model.ClusterSpec;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The openb node list ({@code sn,cpu_milli,memory_mib,gpu,model}) as a heterogeneous pool. Models are the
 * trace's codes, resolved through the catalog's aliases (V100M16, V100M32, G2, G3, P100, T4, A10); each
 * node gets the catalog's default NVLink layout for its model. GPU sharing is not capped by a task count
 * (split count {@value #SPLIT_COUNT}): Alibaba's cluster shares a GPU by compute share only. Nodes without
 * GPUs are left out.
 */
public final class OpenbNodeList {
    /** Tasks that may share one GPU: effectively no limit (a share is at least 1 milli). */
    static final int SPLIT_COUNT = 1000;

    private OpenbNodeList() {}

    public static ClusterSpec read(Path file, GpuCatalog catalog) {
        if (!Files.isRegularFile(file)) throw new SpecException("--nodes", "nodes", "no such file: " + file);
        String name = file.toString();
        List<NodeSpec> nodes = new ArrayList<>();
        try (MappedLines lines = new MappedLines(file)) {
            String header = lines.lineAt(lines.start());
            if (header == null || header.isBlank()) throw new SpecException(name + ":1", null, "empty node list: a header sn,cpu_milli,memory_mib,gpu,model is required");
            Columns columns = new Columns(header, name + ":1");
            columns.require("sn", "gpu", "model");
            int lineNo = 1;
            for (String text; (text = lines.lineAt(lines.nextOffset())) != null; ) {
                lineNo++;
                if (text.isBlank()) continue;
                Row row = new Row(name, lineNo, Row.split(text), columns);
                String sn = row.required("sn");
                int gpus = (int) row.integer("gpu", 0, ClusterSpecs.MAX_GPUS_PER_NODE);
                long cpu = row.optionalInteger("cpu_milli", 0, Long.MAX_VALUE / 2, 0);
                long mem = row.optionalInteger("memory_mib", 0, Long.MAX_VALUE / 2, 0);
                if (gpus == 0) continue;
                String code = row.required("model");
                GpuModel model = catalog.find(code).orElseThrow(() -> row.error("model", "unknown GPU model '" + code + "'; see 'gpupool catalog'"));
                List<GpuDevice> devices = new ArrayList<>(gpus);
                for (int g = 0; g < gpus; g++) devices.add(new GpuDevice(g, ClusterSpecs.gpuUuid(sn, g), model, true));
                try {
                    nodes.add(new NodeSpec(sn, devices, cpu, mem, GpuCatalog.defaultNvlinkDomains(model, gpus), 1.0, SPLIT_COUNT, Map.of()));
                } catch (SpecException e) {
                    throw row.error(e.field(), e.rule());
                }
            }
        }
        if (nodes.isEmpty()) throw new SpecException(name, "gpu", "the node list has no node with GPUs");
        try {
            return new ClusterSpec(nodes);
        } catch (SpecException e) {
            throw new SpecException(name, e.field(), (e.where() != null ? e.where() + ": " : "") + e.rule());
        }
    }
}
