package io.gpupool.agent.gpu;

import io.gpupool.agent.protocol.GpuSample;

import java.util.List;

/**
 * A way to find this machine's GPUs and read their telemetry. Implementations: {@link NvmlBackend}
 * (libnvidia-ml through FFM), {@link NvidiaSmiBackend} (the nvidia-smi command), {@link FakeGpuBackend}
 * (made-up GPUs for demos and tests). A new one is one class plus one line in {@link GpuBackends}.
 *
 * <p>Backends are used from one agent thread at a time but must tolerate calls from different threads.
 */
public interface GpuBackend extends AutoCloseable {

    /** The registered name, e.g. {@code nvml}. */
    String name();

    /** The driver and the GPUs. Called once at start; cheap enough to repeat. */
    GpuDiscovery discover() throws GpuBackendException;

    /** One telemetry reading per GPU, in index order, with the compute processes on each. */
    List<GpuSample> sample() throws GpuBackendException;

    /** Releases what the backend holds (NVML's handle); the backend is unusable afterwards. */
    @Override
    default void close() {
    }
}
