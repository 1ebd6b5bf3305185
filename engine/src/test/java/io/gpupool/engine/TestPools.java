package io.gpupool.engine;

import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.JobSpec;
import io.gpupool.model.NodeSpec;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/** Small pools for engine tests, built from records so the tests do not depend on the catalog. */
public final class TestPools {
    public static final GpuModel A100 = new GpuModel("A100-80GB", "A100 80GB", 81920, 312, 312, 2039, 400, 3, 600, List.of(), "test");
    public static final GpuModel T4 = new GpuModel("T4", "T4", 15360, 0, 65, 320, 70, 0, 0, List.of(), "test");

    private TestPools() {}

    public static NodeSpec node(String name, GpuModel model, int gpus, List<List<Integer>> domains, double oversub, int split) {
        List<GpuDevice> devs = IntStream.range(0, gpus)
                .mapToObj(i -> new GpuDevice(i, "GPU-" + name + "-" + i, model, true)).toList();
        return new NodeSpec(name, devs, 96_000, 1 << 20, domains, oversub, split, Map.of());
    }

    /** n nodes of g GPUs of one model, each node one NVLink domain when the model has NVLink. */
    public static ClusterSpec pool(int n, int g, GpuModel model) {
        List<NodeSpec> nodes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            List<List<Integer>> dom = model.hasNvlink() ? List.of(IntStream.range(0, g).boxed().toList()) : List.of();
            nodes.add(node(model.id().toLowerCase() + "-" + i, model, g, dom, 1.0, 10));
        }
        return new ClusterSpec(nodes);
    }

    public static JobSpec.Builder job(String id, int gpus) {
        return JobSpec.builder(id).gpus(gpus);
    }
}
