package io.gpupool.cli;

import io.gpupool.agent.gpu.GpuBackends;
import picocli.CommandLine.Option;

/** How this machine's GPUs are found, for {@code gpus} and {@code agent} (a picocli mixin). */
final class GpuDiscoveryOptions {
    @Option(names = "--backend", paramLabel = "NAME", defaultValue = "auto",
            description = "GPU discovery: auto (NVML, then nvidia-smi), nvml, nvidia-smi, fake (default: ${DEFAULT-VALUE}).")
    String backend;

    @Option(names = "--fake-gpus", paramLabel = "SPEC",
            description = "Made-up GPUs, COUNTxMODEL[,...] with catalog models, e.g. 8xA100-80GB,8xL40S (demos, tests).")
    String fakeGpus;

    @Option(names = "--nvml-library", paramLabel = "PATH",
            description = "The NVML library to load (default: libnvidia-ml.so.1 from the linker's search path).")
    String nvmlLibrary;

    /** The backend settings, with {@code nvidiaSmi} the nvidia-smi command (null: from PATH). */
    GpuBackends.Options backendOptions(String nvidiaSmi) {
        return new GpuBackends.Options(backend, nvmlLibrary, nvidiaSmi, fakeGpus, null);
    }
}
