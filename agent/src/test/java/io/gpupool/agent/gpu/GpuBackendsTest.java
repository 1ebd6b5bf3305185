package io.gpupool.agent.gpu;

import io.gpupool.model.SpecException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Choosing a backend: auto falls back from NVML to nvidia-smi and says why. */
class GpuBackendsTest {

    @TempDir
    Path dir;

    @Test
    void autoFallsBackToNvidiaSmiWhenTheNvmlLibraryIsMissing() throws Exception {
        String smi = FakeNvidiaSmi.write(dir, "hgx-a100").toString();
        GpuBackends.Opened o = GpuBackends.open(new GpuBackends.Options(null, "/nonexistent/libnvidia-ml.so.1", smi, null, null));
        try (GpuBackend b = o.backend()) {
            assertThat(b.name()).isEqualTo("nvidia-smi");
            assertThat(o.discovery().gpus()).hasSize(4);
            assertThat(o.passedOver()).singleElement().asString()
                    .startsWith("nvml: NVML: cannot load /nonexistent/libnvidia-ml.so.1");
        }
    }

    @Test
    void autoUsesNvmlWhenItLoads() throws Throwable {
        NvmlStandin.reset();
        GpuBackends.Opened o = GpuBackends.open(new GpuBackends.Options("auto", NvmlStandin.library().toString(), "/nonexistent/nvidia-smi", null, null));
        try (GpuBackend b = o.backend()) {
            assertThat(b.name()).isEqualTo("nvml");
            assertThat(o.passedOver()).isEmpty();
        }
    }

    @Test
    void whenEveryBackendFailsTheErrorListsEachReason() throws Exception {
        String smi = FakeNvidiaSmi.writeBroken(dir).toString();
        assertThatThrownBy(() -> GpuBackends.open(new GpuBackends.Options(null, "/nonexistent/libnvidia-ml.so.1", smi, null, null)))
                .isInstanceOf(GpuBackendException.class)
                .hasMessageContaining("no GPU backend works on this machine")
                .hasMessageContaining("nvml: NVML: cannot load")
                .hasMessageContaining("nvidia-smi: ")
                .hasMessageContaining("couldn't communicate with the NVIDIA driver");
    }

    @Test
    void fakeGpusSelectTheFakeBackendAndContradictionsAreRefused() throws Exception {
        GpuBackends.Opened o = GpuBackends.open(new GpuBackends.Options(null, null, null, "2xT4", "n1"));
        assertThat(o.backend().name()).isEqualTo("fake");
        assertThatThrownBy(() -> GpuBackends.open(new GpuBackends.Options("nvml", null, null, "2xT4", "n1")))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.where()).isEqualTo("--fake-gpus"));
        assertThatThrownBy(() -> GpuBackends.open(new GpuBackends.Options("fake", null, null, null, "n1")))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.where()).isEqualTo("--backend fake"));
        assertThatThrownBy(() -> GpuBackends.open(new GpuBackends.Options("rocm", null, null, null, null)))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.where()).isEqualTo("--backend"))
                .hasMessageContaining("nvml, nvidia-smi, fake, auto");
    }
}
