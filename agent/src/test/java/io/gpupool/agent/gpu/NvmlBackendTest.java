package io.gpupool.agent.gpu;

import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GpuProcess;
import io.gpupool.agent.protocol.GpuSample;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The FFM binding against the stand-in libnvidia-ml built by gcc for this test (see nvml_standin.c). */
class NvmlBackendTest {

    static final String GPU0 = "GPU-0a0a0a0a-0000-4000-8000-000000000000";
    static final String GPU1 = "GPU-1b1b1b1b-1111-4111-8111-111111111111";

    @BeforeEach
    void resetStandIn() throws Throwable {
        NvmlStandin.reset();
    }

    private static NvmlBackend open() throws GpuBackendException {
        return NvmlBackend.open(NvmlStandin.library().toString());
    }

    @Test
    void structLayoutsHaveNvmlHsSizes() {
        assertThat(Nvml.MEMORY.byteSize()).isEqualTo(24);
        assertThat(Nvml.UTILIZATION.byteSize()).isEqualTo(8);
        assertThat(Nvml.PROCESS_INFO.byteSize()).isEqualTo(24);
        assertThat(Nvml.PCI_INFO.byteSize()).isEqualTo(68);
    }

    @Test
    void discoversDriverAndGpusWithCatalogModelsAndNvlinkPeers() throws Throwable {
        try (NvmlBackend nvml = open()) {
            GpuDiscovery d = nvml.discover();
            assertThat(d.backend()).isEqualTo("nvml");
            assertThat(d.driverVersion()).isEqualTo("550.54.15");
            assertThat(d.cudaVersion()).isEqualTo("12.4");
            assertThat(d.gpus()).extracting(GpuInfo::index, GpuInfo::uuid, GpuInfo::productName, GpuInfo::modelId, GpuInfo::memoryTotalMib)
                    .containsExactly(
                            org.assertj.core.groups.Tuple.tuple(0, GPU0, "NVIDIA A100-SXM4-80GB", "A100-80GB", 81920L),
                            org.assertj.core.groups.Tuple.tuple(1, GPU1, "NVIDIA A100-SXM4-80GB", "A100-80GB", 81920L));
            assertThat(d.gpus()).as("device node minors from nvmlDeviceGetMinorNumber").extracting(GpuInfo::minor).containsExactly(1, 0);
            // Links 0 and 1 join the two GPUs; GPU 0's link 3 goes to a switch with no other GPU on it.
            assertThat(d.gpus().get(0).nvlinkPeers()).containsExactly(1);
            assertThat(d.gpus().get(1).nvlinkPeers()).containsExactly(0);
        }
        assertThat(NvmlStandin.initCalls()).isEqualTo(1);
        assertThat(NvmlStandin.shutdownCalls()).as("close() shuts NVML down").isEqualTo(1);
    }

    @Test
    void samplesTelemetryAndTurnsUnsupportedValuesIntoNull() throws Throwable {
        try (NvmlBackend nvml = open()) {
            List<GpuSample> s = nvml.sample();
            GpuSample g0 = s.get(0);
            assertThat(g0.uuid()).isEqualTo(GPU0);
            assertThat(g0.utilizationPercent()).isEqualTo(37);
            assertThat(g0.memoryUsedMib()).isEqualTo(4096);
            assertThat(g0.memoryTotalMib()).isEqualTo(81920);
            assertThat(g0.temperatureC()).isEqualTo(45);
            assertThat(g0.powerWatts()).isEqualTo(123.456);
            assertThat(g0.processes()).containsExactly(
                    new GpuProcess(GPU0, 4242, 2048L),
                    new GpuProcess(GPU0, 4343, null)); // NVML_VALUE_NOT_AVAILABLE
            assertThat(g0.problem()).isNull();

            GpuSample g1 = s.get(1);
            assertThat(g1.powerWatts()).as("NOT_SUPPORTED power").isNull();
            assertThat(g1.utilizationPercent()).isZero();
            assertThat(g1.processes()).isEmpty();
        }
    }

    @Test
    void memoryInUseLeavesOutWhatTheDriverReservesWhereNvmlCanTell() throws Throwable {
        // Seen on an H200 with driver 580: nvmlMemory_t's used said 615 MiB on an idle GPU, nvidia-smi 0.
        try (NvmlBackend nvml = open()) {
            assertThat(nvml.sample().get(0).memoryUsedMib()).as("v2: 4096 MiB used, 512 reserved").isEqualTo(4096);
        }
        NvmlStandin.memoryV2(false);
        try (NvmlBackend nvml = open()) {
            assertThat(nvml.sample().get(0).memoryUsedMib()).as("v1 only: reserved counted as used").isEqualTo(4096 + 512);
        }
    }

    @Test
    void processQueryFollowsTheCountProtocolWhenProcessesStartInBetween() throws Throwable {
        NvmlStandin.clearProcesses(1);
        for (int i = 0; i < 40; i++) NvmlStandin.addProcess(1, 5000 + i, 100 + i);
        // After the size query 20 more processes "start": the first buffer (40 + 8) is too small again.
        NvmlStandin.growAfterSizeQuery(1, 20);
        try (NvmlBackend nvml = open()) {
            List<GpuProcess> procs = nvml.sample().get(1).processes();
            assertThat(procs).hasSize(60);
            assertThat(procs.getFirst()).isEqualTo(new GpuProcess(GPU1, 5000, 100L));
            assertThat(procs.get(39)).isEqualTo(new GpuProcess(GPU1, 5039, 139L));
        }
    }

    @Test
    void aLostGpuIsReportedWithItsProblemWhileTheOthersStillAnswer() throws Throwable {
        try (NvmlBackend nvml = open()) {
            nvml.discover();
            NvmlStandin.loseGpu(1);
            List<GpuSample> s = nvml.sample();
            assertThat(s.get(0).problem()).isNull();
            assertThat(s.get(0).memoryUsedMib()).isEqualTo(4096);
            assertThat(s.get(1).uuid()).isEqualTo(GPU1);
            assertThat(s.get(1).memoryUsedMib()).isNull();
            assertThat(s.get(1).problem()).contains("GPU is lost").contains("fallen off the bus");
        }
    }

    @Test
    void anInitFailureCarriesNvmlsTextAndAHint() throws Throwable {
        NvmlStandin.failInit(9);
        assertThatThrownBy(NvmlBackendTest::open)
                .isInstanceOf(NvmlException.class)
                .hasMessageContaining("nvmlInit_v2 failed: Driver Not Loaded (NVML error 9)")
                .hasMessageContaining("nvidia kernel module");
    }

    @Test
    void aMissingLibraryIsAClearError() {
        assertThatThrownBy(() -> NvmlBackend.open("/nonexistent/libnvidia-ml.so.1"))
                .isInstanceOf(GpuBackendException.class)
                .hasMessageContaining("cannot load /nonexistent/libnvidia-ml.so.1")
                .hasMessageContaining("no NVIDIA driver");
    }

    @Test
    void cudaVersionIsDecodedFromNvmlsInteger() {
        assertThat(NvmlBackend.cudaVersion(12040)).isEqualTo("12.4");
        assertThat(NvmlBackend.cudaVersion(11080)).isEqualTo("11.8");
        assertThat(NvmlBackend.cudaVersion(null)).isNull();
    }
}
