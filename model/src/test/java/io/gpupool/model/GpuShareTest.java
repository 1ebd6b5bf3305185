package io.gpupool.model;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class GpuShareTest {

    @Test
    void computeIsOneToOneThousandMilliUnderTheCallersFieldName() {
        assertThat(GpuShare.requireMilli(null, "gpuMilli", 1)).isEqualTo(1);
        assertThat(GpuShare.requireMilli(null, "gpuMilli", 1000)).isEqualTo(1000);
        for (long bad : new long[] {0, -5, 1001, Long.MAX_VALUE}) {
            assertThatThrownBy(() -> GpuShare.requireMilli("job j", "gpuMilli", bad)).isInstanceOfSatisfying(SpecException.class, e -> {
                assertThat(e.field()).isEqualTo("gpuMilli");
                assertThat(e.where()).isEqualTo("job j");
            });
        }
        assertThatThrownBy(() -> new GpuShare(0, 0)).isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.field()).isEqualTo("gpu_milli"));
    }

    @Test
    void aShareOfAGpuIsForAJobOfOneGpuAndNamesWhatMakesItAShare() {
        GpuShare.requireOneGpuIfShared(null, "m", "mem", 500, 0, 1);
        GpuShare.requireOneGpuIfShared(null, "m", "mem", 1000, 0, 8);
        assertThatThrownBy(() -> GpuShare.requireOneGpuIfShared(null, "m", "mem", 500, 0, 2))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.field()).isEqualTo("m"));
        assertThatThrownBy(() -> GpuShare.requireOneGpuIfShared(null, "m", "mem", 1000, 4096, 2))
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.field()).isEqualTo("mem"));
        // the job spec applies the same rule
        assertThatThrownBy(() -> JobSpec.builder("j").shape(new GangShape(1, 2)).share(new GpuShare(250, 0)).build())
                .isInstanceOfSatisfying(SpecException.class, e -> assertThat(e.field()).isEqualTo("gpu_milli"));
    }
}
