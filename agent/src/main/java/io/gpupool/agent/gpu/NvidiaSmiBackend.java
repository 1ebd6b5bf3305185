package io.gpupool.agent.gpu;

import io.gpupool.agent.CommandOutput;
import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GpuProcess;
import io.gpupool.agent.protocol.GpuSample;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * GPUs through the {@code nvidia-smi} command: the fallback where NVML cannot be loaded into the JVM
 * (an unusual library path, a 32/64-bit mismatch) but the driver's tool runs. One process per query, so
 * slower than NVML; fine at one reading every few seconds.
 */
public final class NvidiaSmiBackend implements GpuBackend {

    public static final String NAME = "nvidia-smi";
    static final Duration TIMEOUT = Duration.ofSeconds(15);

    private final String executable;

    /** @param executable the command to run: a path, or a name looked up on PATH ({@code nvidia-smi}) */
    public NvidiaSmiBackend(String executable) {
        this.executable = executable == null || executable.isBlank() ? "nvidia-smi" : executable;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public GpuDiscovery discover() throws GpuBackendException {
        List<NvidiaSmiOutput.GpuRow> rows = NvidiaSmiOutput.gpus(query("--query-gpu=" + String.join(",", NvidiaSmiOutput.GPU_FIELDS),
                "--format=csv,noheader,nounits"));
        List<List<Integer>> peers;
        try {
            peers = NvidiaSmiOutput.nvlinkPeers(query("topo", "-m"), rows.size());
        } catch (GpuBackendException e) {
            peers = rows.stream().map(r -> List.<Integer>of()).toList(); // topology is a nicety, not a requirement
        }
        List<GpuInfo> gpus = new ArrayList<>();
        // nvidia-smi's --query-gpu has no device minor number; the driver's /proc files do (by UUID)
        Map<String, Integer> minors = NvidiaProcFs.minorsByUuid(NvidiaProcFs.GPUS_DIR);
        for (int i = 0; i < rows.size(); i++) {
            GpuInfo g = NvidiaSmiOutput.toInfo(rows.get(i), peers.get(i));
            gpus.add(g.withMinor(minors.get(g.uuid())));
        }
        String driver = rows.isEmpty() ? null : rows.getFirst().driverVersion();
        String cuda;
        try {
            String q = query("-q", "-d", "COMPUTE");
            cuda = NvidiaSmiOutput.cudaVersion(q);
            if (driver == null) driver = NvidiaSmiOutput.driverVersion(q);
        } catch (GpuBackendException e) {
            cuda = null;
        }
        return new GpuDiscovery(NAME, driver, cuda, gpus);
    }

    @Override
    public List<GpuSample> sample() throws GpuBackendException {
        List<NvidiaSmiOutput.GpuRow> rows = NvidiaSmiOutput.gpus(query("--query-gpu=" + String.join(",", NvidiaSmiOutput.GPU_FIELDS),
                "--format=csv,noheader,nounits"));
        List<GpuProcess> apps = NvidiaSmiOutput.apps(query("--query-compute-apps=" + String.join(",", NvidiaSmiOutput.APP_FIELDS),
                "--format=csv,noheader,nounits"));
        return rows.stream().map(r -> NvidiaSmiOutput.toSample(r, apps)).toList();
    }

    private String query(String... args) throws GpuBackendException {
        List<String> cmd = new ArrayList<>();
        cmd.add(executable);
        cmd.addAll(List.of(args));
        CommandOutput out;
        try {
            out = CommandOutput.run(cmd, TIMEOUT);
        } catch (IOException e) {
            throw new GpuBackendException(e.getMessage(), e);
        }
        if (out.exitCode() != 0) {
            // e.g. "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
            throw new GpuBackendException(executable + " " + args[0] + " failed (exit " + out.exitCode() + "): " + out.firstMessage());
        }
        return out.stdout();
    }

    @Override
    public String toString() {
        return "nvidia-smi(" + executable + ")";
    }
}
