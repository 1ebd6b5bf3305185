package io.gpupool.k8s;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/** Nodes, pods and waiting for the mock API server. */
public final class KubeFixtures {
    private KubeFixtures() {}

    /** A node as NVIDIA GPU feature discovery labels it. */
    public static Node gfdNode(String name, String product, int gpus, int memoryMib) {
        return new NodeBuilder().withNewMetadata().withName(name)
                .addToLabels("nvidia.com/gpu.count", Integer.toString(gpus))
                .addToLabels("nvidia.com/gpu.product", product)
                .addToLabels("nvidia.com/gpu.memory", Integer.toString(memoryMib))
                .addToLabels("kubernetes.io/hostname", name)
                .endMetadata()
                .withNewStatus().addToAllocatable("nvidia.com/gpu", new Quantity(Integer.toString(gpus)))
                .addToAllocatable("cpu", new Quantity("64")).addToAllocatable("memory", new Quantity("512Gi"))
                .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build();
    }

    /** A node whose GPUs HAMi's device plugin registered (nine-field form), split count 10. */
    public static Node hamiNode(String name, String type, int gpus, int memoryMib) {
        String reg = IntStream.range(0, gpus)
                .mapToObj(i -> uuid(name, i) + ",10," + memoryMib + ",100," + type + ",0,true," + i + ",hami-core:")
                .collect(Collectors.joining());
        return new NodeBuilder().withNewMetadata().withName(name).addToAnnotations("hami.io/node-nvidia-register", reg)
                .addToLabels("kubernetes.io/hostname", name).endMetadata()
                .withNewStatus().addToAllocatable("nvidia.com/gpu", new Quantity(Integer.toString(gpus * 10)))
                .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build();
    }

    public static String uuid(String node, int i) {
        return String.format("GPU-%08x-0000-4000-8000-%012d", Math.abs(node.hashCode()), i);
    }

    /** A pod for the gpupool scheduler with these GPU limits (resource -> amount) and annotations. */
    public static Pod pod(String ns, String name, Map<String, String> limits, Map<String, String> annotations) {
        Map<String, Quantity> q = new LinkedHashMap<>();
        limits.forEach((k, v) -> q.put(k, new Quantity(v)));
        return new PodBuilder().withNewMetadata().withNamespace(ns).withName(name).withAnnotations(annotations).endMetadata()
                .withNewSpec().withSchedulerName("gpupool")
                .withContainers(new ContainerBuilder().withName("main").withImage("pytorch").withNewResources().withLimits(q).endResources().build())
                .endSpec().build();
    }

    public static Pod wholeGpus(String ns, String name, int gpus) {
        return pod(ns, name, Map.of("nvidia.com/gpu", Integer.toString(gpus)), Map.of());
    }

    public static Pod shared(String ns, String name, int memMib, int cores) {
        return pod(ns, name, Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", Integer.toString(memMib), "nvidia.com/gpucores", Integer.toString(cores)), Map.of());
    }

    public static Pod gangMember(String ns, String name, String gang, int min, int gpus) {
        return pod(ns, name, Map.of("nvidia.com/gpu", Integer.toString(gpus)), Map.of("gpupool.io/gang", gang, "gpupool.io/gang-min-members", Integer.toString(min)));
    }

    /** Polls until the condition holds; fails after the timeout. */
    public static void await(String what, long timeoutMs, BooleanSupplier condition) {
        long end = System.currentTimeMillis() + timeoutMs;
        while (!condition.getAsBoolean()) {
            if (System.currentTimeMillis() > end) throw new AssertionError("timed out waiting for: " + what);
            try {
                Thread.sleep(25);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
