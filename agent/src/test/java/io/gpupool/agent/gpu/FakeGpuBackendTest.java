package io.gpupool.agent.gpu;

import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GpuProcess;
import io.gpupool.agent.protocol.GpuSample;
import io.gpupool.model.SpecException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FakeGpuBackendTest {

    @Test
    void groupsBecomeCatalogGpusWithStableUuidsAndCatalogNvlinkDomains() {
        FakeGpuBackend a = new FakeGpuBackend("8xA100-80GB, 2xNVIDIA L40S", "node-a");
        List<GpuInfo> gpus = a.discover().gpus();
        assertThat(gpus).hasSize(10);
        assertThat(gpus).extracting(GpuInfo::modelId).containsOnly("A100-80GB", "L40S");
        assertThat(gpus.get(8).modelId()).isEqualTo("L40S");
        assertThat(gpus.get(0).nvlinkPeers()).containsExactly(1, 2, 3, 4, 5, 6, 7); // NVSwitch: one domain
        assertThat(gpus.get(8).nvlinkPeers()).isEmpty(); // L40S has no NVLink
        assertThat(gpus).extracting(GpuInfo::uuid).doesNotHaveDuplicates().allMatch(u -> u.startsWith("GPU-"));

        assertThat(new FakeGpuBackend("8xA100-80GB, 2xNVIDIA L40S", "node-a").discover().gpus())
                .as("same seed, same UUIDs after a restart").isEqualTo(gpus);
        assertThat(new FakeGpuBackend("8xA100-80GB, 2xL40S", "node-b").discover().gpus().getFirst().uuid())
                .as("another node, other UUIDs").isNotEqualTo(gpus.getFirst().uuid());
    }

    @Test
    void telemetryFollowsTheJobsThatRun() {
        FakeGpuBackend b = new FakeGpuBackend("2xA100-80GB", "n");
        List<GpuInfo> gpus = b.discover().gpus();
        GpuSample idle = b.sample().getFirst();
        assertThat(idle.memoryUsedMib()).isZero();
        assertThat(idle.utilizationPercent()).isZero();
        assertThat(idle.powerWatts()).isEqualTo(60.0); // 15% of 400 W
        assertThat(idle.processes()).isEmpty();

        b.follow(() -> List.of(
                new GpuLoad.Use(gpus.get(0).uuid(), 101, 250, 10240),
                new GpuLoad.Use(gpus.get(0).uuid(), 102, 500, 20480),
                new GpuLoad.Use(gpus.get(1).uuid(), 103, 1000, 0)));
        List<GpuSample> s = b.sample();
        assertThat(s.get(0).memoryUsedMib()).isEqualTo(30720);
        assertThat(s.get(0).utilizationPercent()).isEqualTo(75);
        assertThat(s.get(0).powerWatts()).isEqualTo(60 + 340 * 0.75);
        assertThat(s.get(0).processes()).extracting(GpuProcess::pid).containsExactly(101L, 102L);
        assertThat(s.get(1).memoryUsedMib()).as("a whole GPU uses all of it").isEqualTo(81920);
        assertThat(s.get(1).utilizationPercent()).isEqualTo(100);
        assertThat(s.get(1).powerWatts()).isEqualTo(400.0);
        assertThat(s.get(1).temperatureC()).isEqualTo(82);
    }

    @Test
    void badSpecsNameTheItemAndTheRule() {
        assertThatThrownBy(() -> new FakeGpuBackend("8xA100-80GB,4xB300", "n"))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.where() + "/" + e.field()).isEqualTo("--fake-gpus item 2 '4xB300'/gpu model"));
        assertThatThrownBy(() -> new FakeGpuBackend("A100", "n"))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.where()).isEqualTo("--fake-gpus item 1 'A100'"));
        assertThatThrownBy(() -> new FakeGpuBackend("0xT4", "n"))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.where() + "/" + e.field()).isEqualTo("--fake-gpus item 1 '0xT4'/count"));
        assertThatThrownBy(() -> new FakeGpuBackend("", "n"))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.where()).isEqualTo("--fake-gpus"));
    }
}
