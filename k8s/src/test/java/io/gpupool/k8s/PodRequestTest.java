package io.gpupool.k8s;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuShare;
import io.gpupool.model.SpecException;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static io.gpupool.k8s.KubeFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** HAMi's resource names read as HAMi reads them, mapped to the engine's shares. */
class PodRequestTest {
    private static final GpuCatalog CATALOG = GpuCatalog.standard();

    private static PodRequest of(Map<String, String> limits, Map<String, String> annotations) {
        return PodRequest.of(pod("ns", "p", limits, annotations), CATALOG);
    }

    @Test
    void gpusAloneAreWholeGpus() {
        PodRequest r = of(Map.of("nvidia.com/gpu", "4"), Map.of());
        assertThat(r.gpus()).isEqualTo(4);
        assertThat(r.share()).isEqualTo(GpuShare.WHOLE_GPU);
        assertThat(r.cores()).isEqualTo(100);
        assertThat(of(Map.of("nvidia.com/gpu", "1", "nvidia.com/gpucores", "100"), Map.of()).share().isWhole()).isTrue();
    }

    @Test
    void memoryAndCoresMakeAShareOfOneGpu() {
        PodRequest r = of(Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", "3000", "nvidia.com/gpucores", "30"), Map.of());
        assertThat(r.share()).isEqualTo(new GpuShare(300, 3000));
        assertThat(r.cores()).isEqualTo(30);
        // memory alone: HAMi's "no compute limit" (cores 0), the smallest compute share
        assertThat(of(Map.of("nvidia.com/gpumem", "3000"), Map.of()).share()).isEqualTo(new GpuShare(1, 3000));
        // a memory percentage sizes memory on the card the pod gets, with the same compute share
        assertThat(of(Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem-percentage", "50"), Map.of()).share()).isEqualTo(new GpuShare(500, 0));
    }

    @Test
    void badRequestsNameTheFieldAndTheRule() {
        assertThatThrownBy(() -> of(Map.of("nvidia.com/gpu", "2", "nvidia.com/gpumem", "3000"), Map.of()))
                .isInstanceOfSatisfying(SpecException.class, e -> {
                    assertThat(e.where()).isEqualTo("pod ns/p");
                    assertThat(e.field()).isEqualTo("containers[0].resources");
                });
        assertThatThrownBy(() -> of(Map.of("nvidia.com/gpu", "1", "nvidia.com/gpucores", "150"), Map.of()))
                .hasMessageContaining("containers[0].resources.nvidia.com/gpucores").hasMessageContaining("0..100");
        assertThatThrownBy(() -> of(Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem-percentage", "50", "nvidia.com/gpucores", "20"), Map.of()))
                .hasMessageContaining("gpumem-percentage");
        assertThatThrownBy(() -> of(Map.of("nvidia.com/gpu", "0.5"), Map.of())).hasMessageContaining("whole number");
        assertThatThrownBy(() -> of(Map.of("nvidia.com/gpu", "1"), Map.of(KubeNames.USE_GPU_TYPE, "Voodoo5"))).hasMessageContaining("unknown GPU model 'Voodoo5'");
        assertThatThrownBy(() -> of(Map.of("nvidia.com/gpu", "1"), Map.of(KubeNames.USE_GPU_UUID, "GPU-1"))).hasMessageContaining("not supported");
        assertThatThrownBy(() -> of(Map.of("nvidia.com/gpu", "1", "nvidia.com/gpumem", "100"), Map.of(KubeNames.GANG, "g", KubeNames.GANG_MIN_MEMBERS, "2")))
                .hasMessageContaining("whole GPUs");
        assertThatThrownBy(() -> of(Map.of("nvidia.com/gpu", "1"), Map.of(KubeNames.GANG, "g", KubeNames.GANG_MIN_MEMBERS, "zero")))
                .hasMessageContaining("gpupool.io/gang-min-members").hasMessageContaining("zero");
    }

    @Test
    void gpuTypesAndGangsComeFromAnnotations() {
        PodRequest r = of(Map.of("nvidia.com/gpu", "8"), Map.of(KubeNames.USE_GPU_TYPE, "NVIDIA-A100-SXM4-80GB,H100",
                KubeNames.GANG, "llm", KubeNames.GANG_MIN_MEMBERS, "4", KubeNames.REQUIRE_NVLINK, "true", KubeNames.ESTIMATE_SECONDS, "3600"));
        assertThat(r.allowedModels()).containsExactlyInAnyOrder("A100-80GB", "H100-80GB");
        assertThat(r.gang()).isEqualTo("llm");
        assertThat(r.gangMinMembers()).isEqualTo(4);
        assertThat(r.requireNvlink()).isTrue();
        assertThat(r.estimateMs().getAsLong()).isEqualTo(3_600_000);
        assertThat(of(Map.of("nvidia.com/gpu", "1"), Map.of(KubeNames.NO_USE_GPU_TYPE, "T4")).allowedModels()).doesNotContain("T4").contains("A100-80GB");
        Pod noGpu = pod("ns", "web", Map.of("cpu", "2"), Map.of());
        assertThat(PodRequest.of(noGpu, CATALOG)).isNull();
    }
}
