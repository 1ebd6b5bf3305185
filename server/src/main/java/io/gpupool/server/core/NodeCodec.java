package io.gpupool.server.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A node as JSON: how the store keeps it and how an agent registers it
 * ({@code {"name": "gpu-01", "gpus": [{"index": 0, "uuid": "GPU-...", "model": "A100-80GB"}], ...}}).
 */
public final class NodeCodec {
    private static final ObjectMapper JSON = new ObjectMapper();
    public static final Set<String> FIELDS = Set.of("name", "gpus", "cpuMilli", "memoryMib", "nvlinkDomains",
            "memoryOversubscription", "splitCount", "labels");
    private static final Set<String> GPU_FIELDS = Set.of("index", "uuid", "model", "healthy");

    private NodeCodec() {}

    public static String toJson(NodeSpec n) {
        return toNode(n).toString();
    }

    public static ObjectNode toNode(NodeSpec n) {
        ObjectNode o = JSON.createObjectNode();
        o.put("name", n.name());
        ArrayNode gpus = o.putArray("gpus");
        for (GpuDevice g : n.gpus()) {
            gpus.addObject().put("index", g.index()).put("uuid", g.uuid()).put("model", g.model().id()).put("healthy", g.healthy());
        }
        o.put("cpuMilli", n.cpuMilli());
        o.put("memoryMib", n.memoryMib());
        ArrayNode d = o.putArray("nvlinkDomains");
        for (List<Integer> dom : n.nvlinkDomains()) dom.forEach(d.addArray()::add);
        o.put("memoryOversubscription", n.memoryOversubscription());
        o.put("splitCount", n.splitCount());
        ObjectNode l = o.putObject("labels");
        n.labels().forEach(l::put);
        return o;
    }

    /** Validates a node description; bad input is a {@link ServiceException} naming the field. */
    public static NodeSpec parse(JsonNode body, GpuCatalog catalog) {
        Fields f = Fields.of(body, "", FIELDS);
        String name = f.string("name", null, 253);
        if (name == null || !name.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,252}")) {
            throw ServiceException.invalid("name", "must be 1-253 letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
        if (!f.has("gpus")) throw ServiceException.invalid("gpus", "is required");
        JsonNode arr = f.array("gpus", ClusterSpecs.MAX_GPUS_PER_NODE);
        if (arr.isEmpty()) throw ServiceException.invalid("gpus", "a GPU node needs at least one GPU");
        List<GpuDevice> gpus = new ArrayList<>();
        for (int i = 0; i < arr.size(); i++) {
            Fields g = Fields.of(arr.get(i), "gpus[" + i + "]", GPU_FIELDS);
            int index = (int) g.integer("index", i, 0, ClusterSpecs.MAX_GPUS_PER_NODE - 1);
            if (index != i) throw ServiceException.invalid(g.path("index"), "GPU indices must be 0..n-1 in order, got " + index);
            String uuid = g.string("uuid", null, 128);
            if (uuid == null || uuid.isBlank()) throw ServiceException.invalid(g.path("uuid"), "is required");
            String modelName = g.string("model", null, 128);
            if (modelName == null) throw ServiceException.invalid(g.path("model"), "is required");
            GpuModel model = catalog.find(modelName).orElseThrow(() -> ServiceException.invalid(g.path("model"), "unknown GPU model '" + modelName + "'"));
            gpus.add(new GpuDevice(index, uuid, model, g.bool("healthy", true)));
        }
        long cpu = f.integer("cpuMilli", ClusterSpecs.DEFAULT_CPU_MILLI_PER_GPU * gpus.size(), 0, Long.MAX_VALUE / 4);
        long mem = f.integer("memoryMib", ClusterSpecs.DEFAULT_MEMORY_MIB_PER_GPU * gpus.size(), 0, Long.MAX_VALUE / 4);
        List<List<Integer>> domains = new ArrayList<>();
        if (f.has("nvlinkDomains")) {
            JsonNode ds = f.array("nvlinkDomains", ClusterSpecs.MAX_GPUS_PER_NODE);
            for (int i = 0; i < ds.size(); i++) {
                JsonNode d = ds.get(i);
                if (!d.isArray()) throw ServiceException.malformed("nvlinkDomains[" + i + "]", "must be an array of GPU indices");
                List<Integer> dom = new ArrayList<>();
                for (JsonNode x : d) {
                    if (!x.isInt()) throw ServiceException.malformed("nvlinkDomains[" + i + "]", "must hold integers");
                    dom.add(x.intValue());
                }
                domains.add(dom);
            }
        } else {
            domains = GpuCatalog.defaultNvlinkDomains(gpus.getFirst().model(), gpus.size());
        }
        double oversub = f.number("memoryOversubscription", 1.0, 1.0, 16.0);
        int split = (int) f.integer("splitCount", NodeSpec.DEFAULT_SPLIT_COUNT, 1, 1000);
        Map<String, String> labels = new LinkedHashMap<>();
        if (f.has("labels")) {
            ObjectNode lo = f.object("labels", 64);
            for (Iterator<Map.Entry<String, JsonNode>> it = lo.fields(); it.hasNext(); ) {
                var kv = it.next();
                if (!kv.getValue().isTextual() || kv.getKey().length() > 128 || kv.getValue().textValue().length() > 256) {
                    throw ServiceException.invalid("labels." + kv.getKey(), "labels are short strings (key <= 128, value <= 256 characters)");
                }
                labels.put(kv.getKey(), kv.getValue().textValue());
            }
        }
        try {
            return new NodeSpec(name, gpus, cpu, mem, domains, oversub, split, labels);
        } catch (SpecException e) {
            throw ServiceException.invalid(e.field(), e.getMessage());
        }
    }

    public static NodeSpec fromJson(String json, GpuCatalog catalog) {
        try {
            return parse(JSON.readTree(json), catalog);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("stored node is not JSON: " + e.getOriginalMessage());
        }
    }
}
