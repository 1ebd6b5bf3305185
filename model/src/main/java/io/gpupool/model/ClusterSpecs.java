package io.gpupool.model;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Compose;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.Node;

/**
 * Builds a {@link ClusterSpec} from the command line's cluster argument: a SPEC string
 * {@code NODESxGPUS:MODEL[:OPTION=VALUE...][,...]} or a path to a YAML cluster file (docs/gpu-catalog.md
 * describes both). Parsing is all-or-nothing: any broken rule is a {@link SpecException} that names the
 * place (SPEC group, or file:line and YAML path) and nothing is returned.
 *
 * <p>Defaults for a node nobody described in detail: CPU and host RAM of a typical 8-GPU server (96 cores,
 * 1 TiB) scaled by the node's GPU count, no memory oversubscription, {@link NodeSpec#DEFAULT_SPLIT_COUNT},
 * NVLink domains from {@link GpuCatalog#defaultNvlinkDomains}, all GPUs healthy.
 */
public final class ClusterSpecs {
    public static final int MAX_GPUS_PER_NODE = 64;
    /** Upper bound on a cluster's node count, so a typo like 64000000x8 fails instead of exhausting memory. */
    public static final int MAX_NODES = 100_000;
    /** 96 cores per 8-GPU server. */
    public static final long DEFAULT_CPU_MILLI_PER_GPU = 12_000;
    /** 1 TiB per 8-GPU server. */
    public static final long DEFAULT_MEMORY_MIB_PER_GPU = 131_072;

    private static final String SPEC_FORM = "expected NODESxGPUS:MODEL[:oversub=F][:split=N] (e.g. 64x8:V100-32GB)";
    static final Pattern UNSIGNED = Pattern.compile("\\+?\\d{1,18}");
    static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,252}");

    private ClusterSpecs() {}

    /** A SPEC string, or (when it ends in .yaml/.yml) the path of a YAML cluster file. */
    public static ClusterSpec parse(String specOrPath, GpuCatalog catalog) {
        if (specOrPath == null || specOrPath.isBlank()) {
            throw new SpecException("cluster spec", null, "is empty; " + SPEC_FORM + ", or a .yaml/.yml cluster file");
        }
        String s = specOrPath.trim();
        String lower = s.toLowerCase(Locale.ROOT);
        if (lower.endsWith(".yaml") || lower.endsWith(".yml")) {
            try {
                return parseFile(Path.of(s), catalog);
            } catch (InvalidPathException e) {
                throw new SpecException("cluster file '" + s + "'", null, "is not a valid path: " + e.getReason());
            }
        }
        if (!s.contains(":") && looksLikeFile(s)) {
            throw new SpecException("cluster file '" + s + "'", null, "a cluster file's name must end in .yaml or .yml");
        }
        return parseSpec(s, catalog);
    }

    /** A SPEC string: comma-separated groups {@code NODESxGPUS:MODEL[:oversub=F][:split=N]}. */
    public static ClusterSpec parseSpec(String spec, GpuCatalog catalog) {
        Builder b = new Builder();
        String[] groups = spec.split(",", -1);
        for (int i = 0; i < groups.length; i++) {
            String where = "cluster spec '" + spec + "' group " + (i + 1);
            String g = groups[i].trim();
            if (g.isEmpty()) throw new SpecException(where, null, "is empty (a doubled or trailing comma?); " + SPEC_FORM);
            String[] parts = g.split(":", -1);
            String[] counts = parts[0].trim().split("[xX]", -1);
            if (parts.length < 2 || counts.length != 2) throw new SpecException(where, null, SPEC_FORM + ", got '" + g + "'");
            int nodes = (int) specInt(counts[0], where, "node count", MAX_NODES);
            int gpus = (int) specInt(counts[1], where, "GPUs per node", MAX_GPUS_PER_NODE);
            String modelName = parts[1].trim();
            if (modelName.isEmpty()) throw new SpecException(where, "gpu model", "is missing; " + SPEC_FORM);
            GpuModel model = catalog.require(modelName, where);

            double oversub = 1.0;
            int split = NodeSpec.DEFAULT_SPLIT_COUNT;
            Set<String> seen = new HashSet<>();
            for (int k = 2; k < parts.length; k++) {
                String opt = parts[k].trim();
                int eq = opt.indexOf('=');
                String key = eq < 0 ? opt : opt.substring(0, eq).trim().toLowerCase(Locale.ROOT);
                String value = eq < 0 ? "" : opt.substring(eq + 1).trim();
                if (eq < 0 || value.isEmpty()) throw new SpecException(where, key, "expected OPTION=VALUE, got '" + opt + "'");
                if (!seen.add(key)) throw new SpecException(where, key, "is given twice");
                switch (key) {
                    case "oversub" -> oversub = specOversub(value, where);
                    case "split" -> split = (int) specInt(value, where, "split", 1000);
                    default -> throw new SpecException(where, key, "unknown option; known: oversub, split");
                }
            }
            b.addGroup(where, null, null, nodes, gpus, model, null, null, null, oversub, split, Map.of());
        }
        return b.build("cluster spec '" + spec + "'");
    }

    /** A YAML cluster file (see docs/gpu-catalog.md for the format). */
    public static ClusterSpec parseFile(Path file, GpuCatalog catalog) {
        String label = file.toString();
        if (!Files.isRegularFile(file)) throw new SpecException("cluster file '" + label + "'", null, "does not exist or is not a file");
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new SpecException("cluster file '" + label + "'", null, "cannot be read as UTF-8 text: " + e);
        }
        return parseYaml(text, label, catalog);
    }

    /** YAML cluster text; {@code label} (usually the file name) prefixes every error's line number. */
    public static ClusterSpec parseYaml(String yaml, String label, GpuCatalog catalog) {
        Node root;
        try {
            root = new Compose(LoadSettings.builder().setLabel(label).build()).composeString(yaml).orElse(null);
        } catch (MarkedYamlEngineException e) {
            String where = e.getProblemMark().map(m -> label + ":" + (m.getLine() + 1)).orElse(label);
            throw new SpecException(where, null, "not valid YAML: " + e.getProblem());
        } catch (YamlEngineException e) {
            throw new SpecException(label, null, "not valid YAML: " + e.getMessage());
        }
        return new ClusterYamlReader(label, catalog).read(root);
    }

    /**
     * The UUID a GPU gets when its file or SPEC gives none: NVIDIA's {@code GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}
     * form, a name-based (v3) UUID of node name and index, so the same cluster always has the same UUIDs.
     */
    public static String gpuUuid(String nodeName, int index) {
        return "GPU-" + UUID.nameUUIDFromBytes(("gpupool/" + nodeName + "/" + index).getBytes(StandardCharsets.UTF_8));
    }

    // ---------------------------------------------------------------- SPEC helpers

    private static long specInt(String text, String where, String what, long max) {
        String t = text.trim();
        if (!UNSIGNED.matcher(t).matches()) throw new SpecException(where, what, "must be a positive integer, got '" + t + "'");
        long v = Long.parseLong(t);
        if (v < 1 || v > max) throw new SpecException(where, what, "must be in 1.." + max + ", got " + v);
        return v;
    }

    private static double specOversub(String text, String where) {
        double v;
        try {
            v = Double.parseDouble(text);
        } catch (NumberFormatException e) {
            throw new SpecException(where, "oversub", "must be a number in [1, 16], got '" + text + "'");
        }
        if (!(v >= 1.0 && v <= 16.0)) throw new SpecException(where, "oversub", "must be in [1, 16], got " + text);
        return v;
    }

    private static boolean looksLikeFile(String s) {
        try {
            return Files.exists(Path.of(s));
        } catch (InvalidPathException e) {
            return false;
        }
    }

    // ---------------------------------------------------------------- building nodes

    /**
     * Collects nodes, numbers generated names per prefix and keeps names and UUIDs unique. {@code where} is the
     * place of a group or node (SPEC group, or file:line); {@code path} its YAML path, null for a SPEC group.
     */
    static final class Builder {
        private final List<NodeSpec> nodes = new ArrayList<>();
        private final Map<String, Integer> nextNumber = new HashMap<>();
        private final Map<String, String> nameOwner = new HashMap<>();
        private final Map<String, String> uuidOwner = new HashMap<>();

        /** {@code count} nodes of {@code gpus} GPUs each; null cpu/memory/domains take the defaults. */
        void addGroup(String where, String path, String prefix, int count, int gpus, GpuModel model, Long cpuMilli,
                      Long memoryMib, List<List<Integer>> domains, double oversub, int split, Map<String, String> labels) {
            if (nodes.size() + (long) count > MAX_NODES) {
                throw new SpecException(where, field(path, "count"), "the cluster would have more than " + MAX_NODES + " nodes");
            }
            String p = prefix != null ? prefix : model.id().toLowerCase(Locale.ROOT);
            for (int i = 0; i < count; i++) {
                int n = nextNumber.merge(p, 1, Integer::sum) - 1;
                String name = String.format(Locale.ROOT, "%s-%04d", p, n);
                List<GpuDevice> devices = new ArrayList<>();
                for (int g = 0; g < gpus; g++) devices.add(new GpuDevice(g, gpuUuid(name, g), model, true));
                add(where, path, name, devices,
                        cpuMilli != null ? cpuMilli : DEFAULT_CPU_MILLI_PER_GPU * gpus,
                        memoryMib != null ? memoryMib : DEFAULT_MEMORY_MIB_PER_GPU * gpus,
                        domains != null ? domains : GpuCatalog.defaultNvlinkDomains(model, gpus),
                        oversub, split, labels);
            }
        }

        void add(String where, String path, String name, List<GpuDevice> gpus, long cpuMilli, long memoryMib,
                 List<List<Integer>> domains, double oversub, int split, Map<String, String> labels) {
            String place = path == null ? where : where + " " + path;
            String owner = nameOwner.putIfAbsent(name, place);
            if (owner != null) throw new SpecException(where, field(path, "name"), "node name '" + name + "' is already used at " + owner);
            if (nodes.size() >= MAX_NODES) throw new SpecException(where, path, "the cluster would have more than " + MAX_NODES + " nodes");
            for (GpuDevice d : gpus) {
                String u = uuidOwner.putIfAbsent(d.uuid(), place);
                if (u != null) throw new SpecException(where, field(path, "gpus"), "GPU UUID '" + d.uuid() + "' is already used at " + u);
            }
            try {
                nodes.add(new NodeSpec(name, gpus, cpuMilli, memoryMib, domains, oversub, split, labels));
            } catch (SpecException e) {
                // The parsers check these rules first; this only keeps the location if a new NodeSpec rule appears.
                throw new SpecException(where, path, e.getMessage());
            }
        }

        ClusterSpec build(String where) {
            if (nodes.isEmpty()) throw new SpecException(where, null, "describes no nodes");
            return new ClusterSpec(nodes);
        }

        private static String field(String path, String key) {
            return path == null ? key : path + "." + key;
        }
    }
}
