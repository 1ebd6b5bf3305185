package io.gpupool.model;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.nodes.Tag;

import static io.gpupool.model.ClusterSpecs.*;

/** Walks the composed YAML tree (not a generic Map) so every error can name its line. */
final class ClusterYamlReader {
    private static final Set<String> TOP_KEYS = keys("defaults", "groups", "nodes");
    private static final Set<String> DEFAULT_KEYS = keys("memoryOversubscription", "splitCount", "cpuMilliPerGpu",
            "memoryMibPerGpu", "labels");
    private static final Set<String> GROUP_KEYS = keys("count", "gpus", "model", "namePrefix", "cpuMilli", "memoryMib",
            "nvlinkDomains", "memoryOversubscription", "splitCount", "labels");
    private static final Set<String> NODE_KEYS = keys("name", "model", "gpus", "cpuMilli", "memoryMib", "nvlinkDomains",
            "unhealthyGpus", "memoryOversubscription", "splitCount", "labels");
    private static final Set<String> GPU_KEYS = keys("model", "uuid", "healthy");

    private final String label;
    private final GpuCatalog catalog;
    private final Builder builder = new Builder();
    // file-wide defaults
    private double oversub = 1.0;
    private int split = NodeSpec.DEFAULT_SPLIT_COUNT;
    private long cpuPerGpu = DEFAULT_CPU_MILLI_PER_GPU;
    private long memPerGpu = DEFAULT_MEMORY_MIB_PER_GPU;
    private Map<String, String> labels = Map.of();

    ClusterYamlReader(String label, GpuCatalog catalog) {
        this.label = label;
        this.catalog = catalog;
    }

    ClusterSpec read(Node root) {
        if (root == null || isNull(root)) throw new SpecException(label, null, "is empty; expected 'groups:' and/or 'nodes:'");
        Map<String, Node> top = mapping(root, "", TOP_KEYS);
        if (!top.containsKey("groups") && !top.containsKey("nodes")) {
            throw err(root, null, "needs 'groups:' or 'nodes:' (or both)");
        }
        if (top.containsKey("defaults")) readDefaults(top.get("defaults"));
        // Group nodes come first, then explicit nodes, whatever the order of the keys in the file.
        if (top.containsKey("groups")) {
            List<Node> groups = sequence(top.get("groups"), "groups");
            for (int i = 0; i < groups.size(); i++) readGroup(groups.get(i), "groups[" + i + "]");
        }
        if (top.containsKey("nodes")) {
            List<Node> nodes = sequence(top.get("nodes"), "nodes");
            for (int i = 0; i < nodes.size(); i++) readNode(nodes.get(i), "nodes[" + i + "]");
        }
        return builder.build(at(root));
    }

    private void readDefaults(Node n) {
        Map<String, Node> m = mapping(n, "defaults", DEFAULT_KEYS);
        if (m.containsKey("memoryOversubscription")) oversub = oversub(m.get("memoryOversubscription"), "defaults.memoryOversubscription");
        if (m.containsKey("splitCount")) split = (int) integer(m.get("splitCount"), "defaults.splitCount", 1, 1000);
        if (m.containsKey("cpuMilliPerGpu")) cpuPerGpu = integer(m.get("cpuMilliPerGpu"), "defaults.cpuMilliPerGpu", 0, Long.MAX_VALUE / MAX_GPUS_PER_NODE);
        if (m.containsKey("memoryMibPerGpu")) memPerGpu = integer(m.get("memoryMibPerGpu"), "defaults.memoryMibPerGpu", 0, Long.MAX_VALUE / MAX_GPUS_PER_NODE);
        if (m.containsKey("labels")) labels = labels(m.get("labels"), "defaults.labels");
    }

    private void readGroup(Node n, String path) {
        Map<String, Node> m = mapping(n, path, GROUP_KEYS);
        int count = (int) integer(required(n, m, "count", path), path + ".count", 1, MAX_NODES);
        int gpus = (int) integer(required(n, m, "gpus", path), path + ".gpus", 1, MAX_GPUS_PER_NODE);
        GpuModel model = model(required(n, m, "model", path), path + ".model");
        String prefix = m.containsKey("namePrefix") ? name(m.get("namePrefix"), path + ".namePrefix") : null;
        Long cpu = m.containsKey("cpuMilli") ? integer(m.get("cpuMilli"), path + ".cpuMilli", 0, Long.MAX_VALUE) : cpuPerGpu * gpus;
        Long mem = m.containsKey("memoryMib") ? integer(m.get("memoryMib"), path + ".memoryMib", 0, Long.MAX_VALUE) : memPerGpu * gpus;
        List<List<Integer>> domains = m.containsKey("nvlinkDomains") ? domains(m.get("nvlinkDomains"), path + ".nvlinkDomains", gpus) : null;
        double o = m.containsKey("memoryOversubscription") ? oversub(m.get("memoryOversubscription"), path + ".memoryOversubscription") : oversub;
        int s = m.containsKey("splitCount") ? (int) integer(m.get("splitCount"), path + ".splitCount", 1, 1000) : split;
        Map<String, String> l = merged(m, path);
        builder.addGroup(at(n), path, prefix, count, gpus, model, cpu, mem, domains, o, s, l);
    }

    private void readNode(Node n, String path) {
        Map<String, Node> m = mapping(n, path, NODE_KEYS);
        Node nameNode = required(n, m, "name", path);
        String name = name(nameNode, path + ".name");
        GpuModel nodeModel = m.containsKey("model") ? model(m.get("model"), path + ".model") : null;
        Node gpusNode = required(n, m, "gpus", path);

        List<GpuDevice> devices = new ArrayList<>();
        if (gpusNode instanceof SequenceNode) {
            List<Node> list = sequence(gpusNode, path + ".gpus");
            if (list.isEmpty() || list.size() > MAX_GPUS_PER_NODE) {
                throw err(gpusNode, path + ".gpus", "must list 1.." + MAX_GPUS_PER_NODE + " GPUs, got " + list.size());
            }
            for (int i = 0; i < list.size(); i++) devices.add(gpu(list.get(i), path + ".gpus[" + i + "]", i, name, nodeModel));
        } else {
            int count = (int) integer(gpusNode, path + ".gpus", 1, MAX_GPUS_PER_NODE);
            if (nodeModel == null) throw err(n, path + ".model", "is required when 'gpus' is a count");
            for (int i = 0; i < count; i++) devices.add(new GpuDevice(i, gpuUuid(name, i), nodeModel, true));
        }
        int count = devices.size();

        if (m.containsKey("unhealthyGpus")) {
            String p = path + ".unhealthyGpus";
            BitSet seen = new BitSet();
            for (Node idx : sequence(m.get("unhealthyGpus"), p)) {
                int g = (int) integer(idx, p, 0, count - 1L);
                if (seen.get(g)) throw err(idx, p, "GPU " + g + " is listed twice");
                seen.set(g);
                GpuDevice d = devices.get(g);
                devices.set(g, new GpuDevice(d.index(), d.uuid(), d.model(), false));
            }
        }

        List<List<Integer>> domains;
        if (m.containsKey("nvlinkDomains")) {
            domains = domains(m.get("nvlinkDomains"), path + ".nvlinkDomains", count);
        } else {
            // Default wiring is only known for a node of one model.
            Set<GpuModel> models = devices.stream().map(GpuDevice::model).collect(Collectors.toSet());
            domains = models.size() == 1 ? GpuCatalog.defaultNvlinkDomains(devices.getFirst().model(), count) : List.of();
        }
        long cpu = m.containsKey("cpuMilli") ? integer(m.get("cpuMilli"), path + ".cpuMilli", 0, Long.MAX_VALUE) : cpuPerGpu * count;
        long mem = m.containsKey("memoryMib") ? integer(m.get("memoryMib"), path + ".memoryMib", 0, Long.MAX_VALUE) : memPerGpu * count;
        double o = m.containsKey("memoryOversubscription") ? oversub(m.get("memoryOversubscription"), path + ".memoryOversubscription") : oversub;
        int s = m.containsKey("splitCount") ? (int) integer(m.get("splitCount"), path + ".splitCount", 1, 1000) : split;
        builder.add(at(nameNode), path, name, devices, cpu, mem, domains, o, s, merged(m, path));
    }

    /** One entry of a node's {@code gpus:} list: a model name, or {@code {model, uuid, healthy}}. */
    private GpuDevice gpu(Node n, String path, int index, String nodeName, GpuModel nodeModel) {
        if (n instanceof ScalarNode) return new GpuDevice(index, gpuUuid(nodeName, index), model(n, path), true);
        Map<String, Node> m = mapping(n, path, GPU_KEYS);
        GpuModel model;
        if (m.containsKey("model")) model = model(m.get("model"), path + ".model");
        else if (nodeModel != null) model = nodeModel;
        else throw err(n, path + ".model", "is required (the node gives no model)");
        String uuid = gpuUuid(nodeName, index);
        if (m.containsKey("uuid")) {
            uuid = string(m.get("uuid"), path + ".uuid");
            if (uuid.chars().anyMatch(Character::isWhitespace)) throw err(m.get("uuid"), path + ".uuid", "must not contain spaces");
        }
        boolean healthy = !m.containsKey("healthy") || bool(m.get("healthy"), path + ".healthy");
        return new GpuDevice(index, uuid, model, healthy);
    }

    private List<List<Integer>> domains(Node n, String path, int gpus) {
        List<List<Integer>> out = new ArrayList<>();
        BitSet seen = new BitSet();
        List<Node> list = sequence(n, path);
        for (int i = 0; i < list.size(); i++) {
            String p = path + "[" + i + "]";
            List<Node> members = sequence(list.get(i), p);
            if (members.isEmpty()) throw err(list.get(i), p, "an NVLink domain must list at least one GPU");
            List<Integer> d = new ArrayList<>();
            for (Node g : members) {
                int idx = (int) integer(g, p, 0, gpus - 1L);
                if (seen.get(idx)) throw err(g, p, "GPU " + idx + " is in two NVLink domains");
                seen.set(idx);
                d.add(idx);
            }
            out.add(List.copyOf(d));
        }
        return out;
    }

    private Map<String, String> merged(Map<String, Node> m, String path) {
        if (!m.containsKey("labels")) return labels;
        Map<String, String> out = new LinkedHashMap<>(labels);
        out.putAll(labels(m.get("labels"), path + ".labels"));
        return out;
    }

    private Map<String, String> labels(Node n, String path) {
        Map<String, String> out = new LinkedHashMap<>();
        if (!(n instanceof MappingNode mn)) throw err(n, path, "must be a mapping of label: value");
        for (NodeTuple t : mn.getValue()) {
            String k = string(t.getKeyNode(), path);
            if (out.containsKey(k)) throw err(t.getKeyNode(), path + "." + k, "is given twice");
            out.put(k, string(t.getValueNode(), path + "." + k));
        }
        return out;
    }

    // ---- typed scalars and collections, each failing with file:line and YAML path

    private Map<String, Node> mapping(Node n, String path, Set<String> allowed) {
        if (!(n instanceof MappingNode mn)) {
            throw err(n, path.isEmpty() ? null : path, (path.isEmpty() ? "the file " : "") + "must be a mapping (key: value)");
        }
        Map<String, Node> out = new LinkedHashMap<>();
        for (NodeTuple t : mn.getValue()) {
            Node keyNode = t.getKeyNode();
            if (!(keyNode instanceof ScalarNode ks)) throw err(keyNode, path, "keys must be plain names");
            String key = ks.getValue();
            String keyPath = path.isEmpty() ? key : path + "." + key;
            if (!allowed.contains(key)) {
                throw err(keyNode, keyPath, "unknown key; known keys here: " + String.join(", ", allowed));
            }
            if (out.put(key, t.getValueNode()) != null) throw err(keyNode, keyPath, "is given twice");
        }
        return out;
    }

    private Node required(Node parent, Map<String, Node> m, String key, String path) {
        Node v = m.get(key);
        if (v == null) throw err(parent, path + "." + key, "is required");
        return v;
    }

    private List<Node> sequence(Node n, String path) {
        if (!(n instanceof SequenceNode sn)) throw err(n, path, "must be a list");
        return sn.getValue();
    }

    private String string(Node n, String path) {
        if (isNull(n)) throw err(n, path, "has no value");
        if (!(n instanceof ScalarNode s)) throw err(n, path, "must be a single value, not a list or mapping");
        String v = s.getValue().trim();
        if (v.isEmpty()) throw err(n, path, "must not be empty");
        return v;
    }

    private String name(Node n, String path) {
        String v = string(n, path);
        if (!NAME.matcher(v).matches()) {
            throw err(n, path, "must be 1..253 letters, digits, '.', '_' or '-' starting with a letter or digit, got '" + v + "'");
        }
        return v;
    }

    private long integer(Node n, String path, long min, long max) {
        String v = string(n, path);
        if (!UNSIGNED.matcher(v).matches()) throw err(n, path, "must be an integer in " + min + ".." + max + ", got '" + v + "'");
        long x = Long.parseLong(v);
        if (x < min || x > max) throw err(n, path, "must be in " + min + ".." + max + ", got " + x);
        return x;
    }

    private double oversub(Node n, String path) {
        String v = string(n, path);
        double x;
        try {
            x = Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw err(n, path, "must be a number in [1, 16], got '" + v + "'");
        }
        if (!(x >= 1.0 && x <= 16.0)) throw err(n, path, "must be in [1, 16], got " + v);
        return x;
    }

    private boolean bool(Node n, String path) {
        String v = string(n, path).toLowerCase(Locale.ROOT);
        return switch (v) {
            case "true" -> true;
            case "false" -> false;
            default -> throw err(n, path, "must be true or false, got '" + v + "'");
        };
    }

    private GpuModel model(Node n, String path) {
        String v = string(n, path);
        return catalog.find(v).orElseThrow(() -> err(n, path, "unknown GPU model '" + v + "'; known: "
                + catalog.all().stream().map(GpuModel::id).collect(Collectors.joining(", "))));
    }

    private static boolean isNull(Node n) {
        return n instanceof ScalarNode && Tag.NULL.equals(n.getTag());
    }

    private String at(Node n) {
        return n.getStartMark().map(Mark::getLine).map(l -> label + ":" + (l + 1)).orElse(label);
    }

    private SpecException err(Node n, String path, String rule) {
        return new SpecException(at(n), path, rule);
    }

    private static Set<String> keys(String... k) {
        return java.util.Collections.unmodifiableSet(new LinkedHashSet<>(List.of(k)));
    }
}
