package io.gpupool.agent.node;

import io.gpupool.agent.gpu.FakeGpuBackend;
import io.gpupool.agent.run.RunnerConfig;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The agents a test started against its in-memory server, stopped with their jobs when the test ends. A test that
 * closes an agent itself (an agent "dying") removes it first.
 */
final class TestAgents implements AutoCloseable {
    final InMemoryServerLink server = new InMemoryServerLink();
    private final List<NodeAgent> started = new ArrayList<>();

    /** Node n1 with fake GPUs ({@code "4xA100-80GB"}), reporting every 50 ms, jobs stopped after {@code killGrace}. */
    NodeAgent start(Path work, String fakeGpus, Duration killGrace) throws Exception {
        FakeGpuBackend gpus = new FakeGpuBackend(fakeGpus, "n1");
        return add(new NodeAgent(NodeAgent.Config.defaults("n1", work)
                .withRunner(RunnerConfig.defaults(work).withKillGrace(killGrace))
                .withReportInterval(Duration.ofMillis(50)), gpus, gpus.discover(), server));
    }

    NodeAgent add(NodeAgent a) {
        started.add(a);
        return a;
    }

    void remove(NodeAgent a) {
        started.remove(a);
    }

    @Override
    public void close() throws Exception {
        for (NodeAgent a : started) {
            a.runner().stopAll("test over", Duration.ofSeconds(5));
            a.close();
        }
    }
}
