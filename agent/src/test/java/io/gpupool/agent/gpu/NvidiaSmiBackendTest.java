package io.gpupool.agent.gpu;

import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GpuProcess;
import io.gpupool.agent.protocol.GpuSample;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The nvidia-smi parser on fixture output, and the backend running a script that prints it. */
class NvidiaSmiBackendTest {

    @TempDir
    Path dir;

    private static String fixture(String name) throws Exception {
        return Files.readString(Path.of(NvidiaSmiBackendTest.class.getResource("smi/" + name).toURI()));
    }

    @Test
    void readsAnHgxBoxWithNvlinkPeersAndCudaVersion() throws Exception {
        NvidiaSmiBackend smi = new NvidiaSmiBackend(FakeNvidiaSmi.write(dir, "hgx-a100").toString());
        GpuDiscovery d = smi.discover();
        assertThat(d.driverVersion()).isEqualTo("535.104.05");
        assertThat(d.cudaVersion()).isEqualTo("12.2");
        assertThat(d.gpus()).hasSize(4);
        assertThat(d.gpus()).allSatisfy(g -> assertThat(g.modelId()).isEqualTo("A100-80GB"));
        assertThat(d.gpus().get(0).uuid()).isEqualTo("GPU-3f4c6a1e-2b7d-4c1a-9e0f-5a6b7c8d9e01");
        assertThat(d.gpus().get(0).nvlinkPeers()).containsExactly(1, 2, 3);
        assertThat(d.gpus().get(3).nvlinkPeers()).containsExactly(0, 1, 2);

        List<GpuSample> s = smi.sample();
        assertThat(s.get(0).utilizationPercent()).isEqualTo(97);
        assertThat(s.get(0).memoryUsedMib()).isEqualTo(40213);
        assertThat(s.get(0).powerWatts()).isEqualTo(312.45);
        assertThat(s.get(0).processes()).extracting(GpuProcess::pid, GpuProcess::usedMemoryMib)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(18233L, 38912L), org.assertj.core.groups.Tuple.tuple(18301L, 1280L));
        assertThat(s.get(1).processes()).isEmpty();
    }

    @Test
    void bracketedValuesBecomeNullAndUnknownCardsHaveNoModel() throws Exception {
        NvidiaSmiBackend smi = new NvidiaSmiBackend(FakeNvidiaSmi.write(dir, "mixed-na").toString());
        GpuDiscovery d = smi.discover();
        assertThat(d.gpus()).extracting(GpuInfo::modelId).containsExactly("T4", "RTX-3090", null); // A10G: not in the catalog
        assertThat(d.gpus()).allSatisfy(g -> assertThat(g.nvlinkPeers()).isEmpty()); // SYS everywhere
        assertThat(d.cudaVersion()).isEqualTo("11.4");

        List<GpuSample> s = smi.sample();
        assertThat(s.get(0).powerWatts()).isEqualTo(26.84);
        assertThat(s.get(1).utilizationPercent()).as("[N/A]").isNull();
        assertThat(s.get(1).powerWatts()).as("[N/A]").isNull();
        assertThat(s.get(1).temperatureC()).isEqualTo(52);
        assertThat(s.get(2).utilizationPercent()).as("[Not Supported]").isNull();
        assertThat(s.get(2).temperatureC()).as("[Insufficient Permissions]").isNull();
        assertThat(s.get(2).powerWatts()).as("[Unknown Error]").isNull();
        assertThat(s.get(1).processes()).containsExactly(
                new GpuProcess("GPU-2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e", 7781, null),
                new GpuProcess("GPU-2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e", 7790, 517L));
    }

    @Test
    void aMalformedLineNamesTheLineAndTheField() {
        String csv = "0, GPU-a, Tesla T4, 15360, 0, 14930, 0, 37, 26.84, 470.182.03\n"
                + "1, GPU-b, Tesla T4, lots, 0, 14930, 0, 37, 26.84, 470.182.03\n";
        assertThatThrownBy(() -> NvidiaSmiOutput.gpus(csv))
                .hasMessage("nvidia-smi --query-gpu output line 2, field 'memory.total': expected a whole number, got 'lots'");
        assertThatThrownBy(() -> NvidiaSmiOutput.gpus("0, GPU-a, 15360\n"))
                .hasMessageContaining("line 1: expected 10 comma-separated values, got 3");
    }

    @Test
    void aProductNameWithACommaStaysOneField() throws Exception {
        List<NvidiaSmiOutput.GpuRow> rows = NvidiaSmiOutput.gpus(
                "0, GPU-a, NVIDIA RTX A6000, Ada Generation, 49140, 1, 48500, 3, 30, 21.5, 550.54.15\n");
        assertThat(rows.getFirst().name()).isEqualTo("NVIDIA RTX A6000, Ada Generation");
        assertThat(rows.getFirst().memoryTotalMib()).isEqualTo(49140);
    }

    @Test
    void noRunningProcessesIsAnEmptyList() throws Exception {
        assertThat(NvidiaSmiOutput.apps("")).isEmpty();
        assertThat(NvidiaSmiOutput.apps("No running processes found\n")).isEmpty();
        assertThat(NvidiaSmiOutput.nvlinkPeers(fixture("hgx-a100-topo.txt"), 2)).containsExactly(List.of(1), List.of(0));
    }

    @Test
    void aFailingNvidiaSmiSaysWhy() throws Exception {
        NvidiaSmiBackend smi = new NvidiaSmiBackend(FakeNvidiaSmi.writeBroken(dir).toString());
        assertThatThrownBy(smi::discover)
                .isInstanceOf(GpuBackendException.class)
                .hasMessageContaining("failed (exit 9)")
                .hasMessageContaining("couldn't communicate with the NVIDIA driver");
    }
}
