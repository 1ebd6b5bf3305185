package io.gpupool.agent.gpu;

import io.gpupool.agent.protocol.NodeInventory;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class LocalNodeTest {

    @Test
    void describesTheMachineWithItsGpusAndTheirNvlinkDomains() {
        NodeInventory inv = LocalNode.inventory(new FakeGpuBackend("8xV100-32GB,2xT4", "n").discover());
        assertThat(inv.cpuCount()).isEqualTo(Runtime.getRuntime().availableProcessors());
        assertThat(inv.memoryMib()).isPositive();
        assertThat(inv.hostname()).isNotBlank();
        assertThat(inv.gpus()).hasSize(10);
        assertThat(inv.gpus().get(9).modelId()).isEqualTo("T4");
        assertThat(inv.nvlinkDomains()).containsExactly(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7)); // DGX-1 cube-mesh quads
    }

    @Test
    void aCardTheCatalogDoesNotKnowHasNoModel() {
        assertThat(GpuDiscovery.gpu(0, "GPU-x", "NVIDIA A10G", 23028, List.of()).modelId()).isNull();
        assertThat(GpuDiscovery.gpu(0, "GPU-y", "NVIDIA L40S", 46068, List.of()).modelId()).isEqualTo("L40S");
    }
}
