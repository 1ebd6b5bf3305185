package io.gpupool.agent.gpu;

import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NodeInventoryTest {

    @Test
    void describesTheMachineAndBecomesTheEnginesNodeSpec() {
        NodeInventory inv = NodeInventory.of(new FakeGpuBackend("8xV100-32GB,2xT4", "n").discover());
        assertThat(inv.cpuCount()).isEqualTo(Runtime.getRuntime().availableProcessors());
        assertThat(inv.memoryMib()).isPositive();
        assertThat(inv.hostname()).isNotBlank();
        assertThat(inv.nvlinkDomains()).containsExactly(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7)); // DGX-1 cube-mesh quads

        NodeSpec spec = inv.toNodeSpec("gpu-07", 1.5, 4, Map.of("rack", "r1"));
        assertThat(spec.gpus()).hasSize(10);
        assertThat(spec.gpus().get(9).model().id()).isEqualTo("T4");
        assertThat(spec.gpus().get(0).uuid()).isEqualTo(inv.gpus().get(0).uuid());
        assertThat(spec.nvlinkDomains()).isEqualTo(inv.nvlinkDomains());
        assertThat(spec.memoryOversubscription()).isEqualTo(1.5);
    }

    @Test
    void aCardTheCatalogDoesNotKnowIsRefusedByName() {
        NodeInventory inv = new NodeInventory("h", 8, 1024, "nvidia-smi", "470", "11.4",
                List.of(GpuInfo.of(0, "GPU-x", "NVIDIA A10G", 23028, List.of())));
        assertThatThrownBy(() -> inv.toNodeSpec("n", 1.0, 10, Map.of()))
                .isInstanceOf(SpecException.class)
                .hasMessage("node n gpu 0: field 'model': the GPU catalog does not know 'NVIDIA A10G'; see 'gpupool catalog'");
    }
}
