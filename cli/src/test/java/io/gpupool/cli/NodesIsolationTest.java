package io.gpupool.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The isolation column of {@code gpupool nodes}: a node's confinement in a few words. */
class NodesIsolationTest {

    private static String column(String json) throws Exception {
        return NodesCommand.isolation(new ObjectMapper().readTree(json).path("isolation"));
    }

    @Test
    void saysTheModeWhatHoldsAndWhatIsMissing() throws Exception {
        assertThat(column("{\"isolation\":{\"mode\":\"hybrid\",\"enforced\":[\"cpu(v1)\",\"memory(v1)\",\"swap(v1)\",\"pids(v1)\","
                + "\"devices(v1)\",\"devices(bpf)\",\"kill(cgroup.kill)\"],\"missing\":[]}}"))
                .isEqualTo("hybrid cpu,memory,swap,pids,devices,kill");
        assertThat(column("{\"isolation\":{\"mode\":\"v2\",\"enforced\":[\"cpu(v2)\",\"memory(v2)\",\"devices(bpf)\"],"
                + "\"missing\":[\"pids: EBUSY\",\"swap: no memory.swap.max (swap accounting is off)\"]}}"))
                .isEqualTo("v2 cpu,memory,devices (no pids,swap)");
        assertThat(column("{\"isolation\":{\"mode\":\"none\",\"reason\":\"not root\"}}")).isEqualTo("none");
        assertThat(column("{\"isolation\":null}")).as("an older agent, or a node without one").isEqualTo("-");
        assertThat(column("{}")).isEqualTo("-");
    }
}
