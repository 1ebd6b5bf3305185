package io.gpupool.model;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;

/**
 * A GPU server as it registers with the pool.
 *
 * @param name                    unique node name
 * @param gpus                    the node's GPUs, indexed 0..n-1 in order
 * @param cpuMilli                allocatable CPU in thousandths of a core
 * @param memoryMib               allocatable host RAM in MiB
 * @param nvlinkDomains           groups of GPU indices connected by NVLink (NVSwitch or bridge); a GPU
 *                                in no group talks over PCIe only. Groups are disjoint.
 * @param memoryOversubscription  HAMi's deviceMemoryScaling: fractional grants may sum up to
 *                                physical memory x this factor (>= 1.0; 1.0 = no oversubscription)
 * @param splitCount              HAMi's deviceSplitCount: most tasks that may share one GPU
 * @param labels                  free-form labels (zone, rack, ...)
 */
public record NodeSpec(
        String name,
        List<GpuDevice> gpus,
        long cpuMilli,
        long memoryMib,
        List<List<Integer>> nvlinkDomains,
        double memoryOversubscription,
        int splitCount,
        Map<String, String> labels) {

    public static final int DEFAULT_SPLIT_COUNT = 10;

    public NodeSpec {
        String where = "node " + name;
        if (name == null || name.isBlank()) throw new SpecException("node", "name", "must not be empty");
        gpus = List.copyOf(gpus);
        for (int i = 0; i < gpus.size(); i++) {
            if (gpus.get(i).index() != i) {
                throw new SpecException(where, "gpus[" + i + "].index", "GPU indices must be 0..n-1 in order, got " + gpus.get(i).index());
            }
        }
        if (cpuMilli < 0) throw new SpecException(where, "cpuMilli", "must be >= 0");
        if (memoryMib < 0) throw new SpecException(where, "memoryMib", "must be >= 0");
        if (!(memoryOversubscription >= 1.0) || memoryOversubscription > 16.0) {
            throw new SpecException(where, "memoryOversubscription", "must be in [1, 16], got " + memoryOversubscription);
        }
        if (splitCount < 1) throw new SpecException(where, "splitCount", "must be >= 1, got " + splitCount);
        List<List<Integer>> domains = new ArrayList<>();
        BitSet seen = new BitSet();
        for (List<Integer> d : nvlinkDomains) {
            for (int g : d) {
                if (g < 0 || g >= gpus.size()) throw new SpecException(where, "nvlinkDomains", "GPU index " + g + " does not exist");
                if (seen.get(g)) throw new SpecException(where, "nvlinkDomains", "GPU " + g + " is in two NVLink domains");
                seen.set(g);
            }
            domains.add(List.copyOf(d));
        }
        nvlinkDomains = List.copyOf(domains);
        labels = Map.copyOf(labels);
    }

    /** The NVLink domain index of each GPU, or -1 where the GPU has no NVLink peer. */
    public int[] domainOfGpu() {
        int[] d = new int[gpus.size()];
        java.util.Arrays.fill(d, -1);
        for (int i = 0; i < nvlinkDomains.size(); i++) for (int g : nvlinkDomains.get(i)) d[g] = i;
        return d;
    }
}
