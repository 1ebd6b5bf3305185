package io.gpupool.cli;

import io.gpupool.agent.AgentJson;
import io.gpupool.agent.gpu.GpuBackend;
import io.gpupool.agent.gpu.GpuBackendException;
import io.gpupool.agent.gpu.GpuBackends;
import io.gpupool.agent.gpu.LocalNode;
import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GpuSample;
import io.gpupool.agent.protocol.NodeInventory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/** {@code gpupool gpus}: what the node agent would register, and one telemetry reading. */
@Command(name = "gpus",
        header = "Show this machine's GPUs as the node agent discovers them, with one telemetry reading.",
        description = "Discovers the GPUs through NVML (libnvidia-ml, called in-process), falling back to nvidia-smi, "
                + "or makes them up with --fake-gpus. Prints the inventory the agent registers with (GPUs with UUID, "
                + "catalog model, memory, NVLink peers; driver and CUDA version; CPUs, RAM) and one reading per GPU "
                + "(utilization, memory, temperature, power, compute processes).%n")
public final class GpusCommand implements Callable<Integer> {
    @Mixin GpuDiscoveryOptions discovery;

    @Option(names = "--nvidia-smi", paramLabel = "PATH", description = "The nvidia-smi command (default: from PATH).")
    String nvidiaSmi;

    @Mixin TableOrJson output;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        GpuBackends.Opened opened;
        try {
            opened = GpuBackends.open(discovery.backendOptions(nvidiaSmi));
        } catch (GpuBackendException e) {
            err.println(ErrorHandlers.PREFIX + e.getMessage());
            err.flush();
            return 1;
        }
        try (GpuBackend b = opened.backend()) {
            NodeInventory inv = LocalNode.inventory(opened.discovery());
            List<GpuSample> samples = b.sample();
            switch (output.format) {
                case table -> {
                    for (String p : opened.passedOver()) err.println("gpupool: passed over " + p);
                    out.print(table(inv, samples));
                }
                case json -> {
                    Map<String, Object> o = new LinkedHashMap<>();
                    o.put("inventory", inv);
                    o.put("telemetry", samples);
                    o.put("passed_over", opened.passedOver());
                    out.println(AgentJson.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(o));
                }
            }
        }
        out.flush();
        err.flush();
        return 0;
    }

    static String table(NodeInventory inv, List<GpuSample> samples) {
        StringBuilder sb = new StringBuilder();
        sb.append("host ").append(inv.hostname()).append(", ").append(inv.cpuCount()).append(" CPUs, ")
                .append(TextTable.number(Math.round(inv.memoryMib() / 102.4) / 10.0)).append(" GiB RAM; backend ")
                .append(inv.backend()).append(", driver ").append(orDash(inv.driverVersion()))
                .append(", CUDA ").append(orDash(inv.cudaVersion())).append('\n');
        if (inv.gpus().isEmpty()) return sb.append("no GPUs\n").toString();
        TextTable t = new TextTable("GPU", "UUID", "MODEL", "MEMORY", "USED", "UTIL", "TEMP", "POWER", "NVLINK", "PROCESSES", "PRODUCT")
                .alignRight(0, 3, 4, 5, 6, 7);
        for (GpuInfo g : inv.gpus()) {
            GpuSample s = samples.stream().filter(x -> x.index() == g.index()).findFirst().orElse(null);
            t.row(g.index(), g.uuid(), g.modelId() == null ? "(unknown)" : g.modelId(), g.memoryTotalMib() + " MiB",
                    s == null || s.memoryUsedMib() == null ? "-" : s.memoryUsedMib() + " MiB",
                    s == null || s.utilizationPercent() == null ? "-" : s.utilizationPercent() + "%",
                    s == null || s.temperatureC() == null ? "-" : s.temperatureC() + " C",
                    s == null || s.powerWatts() == null ? "-" : TextTable.number(s.powerWatts()) + " W",
                    g.nvlinkPeers().isEmpty() ? "-" : g.nvlinkPeers().stream().map(String::valueOf).collect(Collectors.joining(",")),
                    s == null ? "-" : s.problem() != null ? s.problem() : processes(s),
                    g.productName());
        }
        return sb.append(t.render()).toString();
    }

    private static String processes(GpuSample s) {
        if (s.processes().isEmpty()) return "-";
        return s.processes().stream()
                .map(p -> p.pid() + (p.usedMemoryMib() == null ? "" : ":" + p.usedMemoryMib() + "MiB"))
                .collect(Collectors.joining(" "));
    }

    private static String orDash(String s) {
        return s == null ? "-" : s;
    }
}
