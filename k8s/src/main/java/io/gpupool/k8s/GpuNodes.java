package io.gpupool.k8s;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A Kubernetes node as the engine sees it. GPUs come from HAMi's device registration
 * ({@code hami.io/node-nvidia-register}: UUID, split count, memory, type and health per GPU) when the
 * node has it, else from NVIDIA GPU feature discovery labels ({@code nvidia.com/gpu.count},
 * {@code .product}, {@code .memory}; GPUs are then named {@code NODE-gpuN}, as GFD gives no UUIDs).
 * The GPU model is the catalog's when the product string names one, else a model of that name and memory.
 */
public final class GpuNodes {
    private final GpuCatalog catalog;
    private final int defaultSplitCount;
    private final double defaultMemoryScaling;

    public GpuNodes(GpuCatalog catalog, int defaultSplitCount, double defaultMemoryScaling) {
        this.catalog = catalog;
        this.defaultSplitCount = defaultSplitCount;
        this.defaultMemoryScaling = defaultMemoryScaling;
    }

    /** The node's GPUs as a node spec, or null when it has none gpupool can use. Bad annotations are a {@link SpecException}. */
    public NodeSpec toSpec(Node node) {
        String name = node.getMetadata().getName();
        Map<String, String> labels = node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
        Map<String, String> ann = node.getMetadata().getAnnotations() == null ? Map.of() : node.getMetadata().getAnnotations();
        String register = ann.get(KubeNames.NODE_NVIDIA_REGISTER);
        long cpuMilli = allocatable(node, "cpu", 1000);
        long memMib = allocatable(node, "memory", 1.0 / (1024 * 1024));
        if (register != null && !register.isBlank()) return fromHami(name, register, labels, cpuMilli, memMib);
        String count = labels.get(KubeNames.GFD_COUNT);
        if (count == null) return null;
        String where = "node " + name;
        int n = parseInt(count, where, "label " + KubeNames.GFD_COUNT);
        if (n == 0) return null;
        String product = labels.get(KubeNames.GFD_PRODUCT);
        if (product == null) throw new SpecException(where, "label " + KubeNames.GFD_PRODUCT, "missing; GPU feature discovery sets it with " + KubeNames.GFD_COUNT);
        String memLabel = labels.get(KubeNames.GFD_MEMORY);
        GpuModel model = model(product, memLabel == null ? 0 : parseInt(memLabel, where, "label " + KubeNames.GFD_MEMORY), where);
        List<GpuDevice> gpus = new ArrayList<>(n);
        for (int i = 0; i < n; i++) gpus.add(new GpuDevice(i, name + "-gpu" + i, model, true));
        return new NodeSpec(name, gpus, cpuMilli, memMib, GpuCatalog.defaultNvlinkDomains(model, n), defaultMemoryScaling, defaultSplitCount, labels);
    }

    /** HAMi registration: {@code UUID,SPLIT,MEM,CORES,TYPE,NUMA,HEALTHY[,INDEX,MODE]:...}. */
    private NodeSpec fromHami(String name, String register, Map<String, String> labels, long cpuMilli, long memMib) {
        String where = "node " + name + " annotation " + KubeNames.NODE_NVIDIA_REGISTER;
        List<String[]> devices = new ArrayList<>();
        for (String d : register.split(":")) {
            if (d.isBlank()) continue;
            String[] f = d.split(",", -1);
            if (f.length != 7 && f.length != 9) throw new SpecException(where, "device " + devices.size(), "has " + f.length + " fields, expected 7 or 9: '" + d + "'");
            devices.add(f);
        }
        if (devices.isEmpty()) return null;
        if (devices.stream().anyMatch(f -> f.length == 9)) {
            devices.sort(java.util.Comparator.comparingInt(f -> f.length == 9 ? parseInt(f[7], where, "device index") : 0));
        }
        int split = Integer.MAX_VALUE;
        long registeredMem = Long.MAX_VALUE;
        String type = devices.getFirst()[4];
        for (String[] f : devices) {
            split = Math.min(split, parseInt(f[1], where, "split count"));
            registeredMem = Math.min(registeredMem, parseInt(f[2], where, "device memory"));
            if (!f[4].equals(type)) throw new SpecException(where, "device type", "mixed GPU types on one node (" + type + ", " + f[4] + ") are not supported");
        }
        // HAMi registers memory already multiplied by deviceMemoryScaling; the catalog knows the physical size
        GpuModel model = model(labels.getOrDefault(KubeNames.GFD_PRODUCT, type), (int) registeredMem, where);
        double scaling = Math.min(16.0, Math.max(1.0, registeredMem / (double) model.memoryMib()));
        List<GpuDevice> gpus = new ArrayList<>();
        for (String[] f : devices) gpus.add(new GpuDevice(gpus.size(), f[0], model, Boolean.parseBoolean(f[6].trim())));
        return new NodeSpec(name, gpus, cpuMilli, memMib, GpuCatalog.defaultNvlinkDomains(model, gpus.size()), scaling, Math.max(1, split), labels);
    }

    /**
     * The catalog's model for the product, with the memory the node reports when that is less than the data
     * sheet's (drivers keep some back): shares are never sized on memory the card does not have.
     */
    private GpuModel model(String product, int memoryMib, String where) {
        GpuModel m = catalog.find(product).orElseGet(() -> {
            if (memoryMib <= 0) throw new SpecException(where, KubeNames.GFD_MEMORY, "GPU '" + product + "' is not in the catalog and its memory is not given");
            return new GpuModel(product, product, memoryMib, 0, 0, 0, 0, 0, 0, List.of(), "node labels");
        });
        if (memoryMib <= 0 || memoryMib >= m.memoryMib()) return m;
        return new GpuModel(m.id(), m.productName(), memoryMib, m.bf16Tflops(), m.fp16Tflops(), m.memoryBandwidthGBs(), m.tdpWatts(),
                m.idleWatts(), m.nvlinkGeneration(), m.nvlinkBandwidthGBs(), m.aliases(), m.source() + "; memory as the node reports it");
    }

    /** Whether new pods may go to the node: not cordoned and Ready. */
    public static boolean schedulable(Node node) {
        if (node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable())) return false;
        if (node.getStatus() == null || node.getStatus().getConditions() == null) return true;
        for (NodeCondition c : node.getStatus().getConditions()) {
            if ("Ready".equals(c.getType())) return "True".equals(c.getStatus());
        }
        return true;
    }

    private static long allocatable(Node node, String resource, double scale) {
        if (node.getStatus() == null || node.getStatus().getAllocatable() == null) return 0;
        Quantity q = node.getStatus().getAllocatable().get(resource);
        if (q == null) return 0;
        try {
            return (long) Math.max(0, q.getNumericalAmount().doubleValue() * scale);
        } catch (RuntimeException e) {
            return 0;
        }
    }

    private static int parseInt(String v, String where, String field) {
        try {
            int n = Integer.parseInt(v.trim());
            if (n >= 0) return n;
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new SpecException(where, field, "must be a whole number >= 0, got '" + v + "'");
    }
}
