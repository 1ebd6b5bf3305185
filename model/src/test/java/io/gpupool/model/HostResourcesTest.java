package io.gpupool.model;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HostResourcesTest {

    @Test
    void aJobAsksForNoHostResourcesUnlessToldAndNegativeAmountsAreRefusedByName() {
        JobSpec plain = JobSpec.builder("j").gpus(1).build();
        assertThat(plain.host()).isEqualTo(HostResources.NONE);
        assertThat(plain.host().requested()).isFalse();
        JobSpec asks = JobSpec.builder("k").gpus(1).host(1500, 4096).build();
        assertThat(asks.host()).isEqualTo(new HostResources(1500, 4096));
        assertThat(asks.host().requested()).isTrue();
        assertThat(asks.host()).hasToString("1500m CPU, 4096 MiB RAM");
        assertThatThrownBy(() -> new HostResources(-1, 0)).isInstanceOf(SpecException.class).hasMessageContaining("cpu_milli").hasMessageContaining("must be >= 0");
        assertThatThrownBy(() -> new HostResources(0, -5)).isInstanceOf(SpecException.class).hasMessageContaining("memory_mib");
    }
}
