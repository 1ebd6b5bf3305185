package io.gpupool.engine.status;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/** Per-node refusals counted per reason, each keeping the most any of its nodes had free. */
class NodeTallyTest {
    private static Status gpus(long free) {
        return Status.insufficient("capacity", Resource.GPUS, 4, free, 8, "insufficient free GPUs");
    }

    private static Status cpu(long free) {
        return Status.insufficient("host", Resource.HOST_CPU, 8_000, free, 16_000, "insufficient host CPU");
    }

    @Test
    void nodesCountPerReasonInMessageOrderWithTheMostFree() {
        NodeTally t = new NodeTally();
        assertThat(NodeTally.dominant(t.counts())).isNull();
        t.add(gpus(1));
        t.add(cpu(2_000));
        t.add(gpus(3));
        t.add(cpu(6_000));
        t.add(gpus(0));
        assertThat(t.counts()).extracting(c -> c.reason().plugin(), c -> c.reason().free(), NodeCount::nodes)
                .containsExactly(tuple("capacity", 3L, 3), tuple("host", 6_000L, 2));
        assertThat(NodeTally.dominant(t.counts())).satisfies(d -> {
            assertThat(d.reason().resource()).isEqualTo(Resource.GPUS);
            assertThat(d.nodes()).isEqualTo(3);
            assertThat(d.reason().free()).isEqualTo(3);
        });
    }

    @Test
    void aTieGoesToTheFirstReasonInMessageOrder() {
        NodeTally t = new NodeTally();
        t.add(cpu(1));
        t.add(gpus(1));
        // "insufficient free GPUs" comes before "insufficient host CPU", whatever the order of the nodes
        assertThat(NodeTally.dominant(t.counts()).reason().plugin()).isEqualTo("capacity");
    }
}
