package io.gpupool.cli;

import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuModel;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code gpupool catalog}: the GPU models gpupool knows, with their canonical IDs and data-sheet figures. */
@Command(name = "catalog",
        header = "List the GPU models gpupool knows, with their data-sheet figures.",
        description = "Prints the canonical IDs that cluster SPECs, --fake-gpus and job constraints accept "
                + "(matched case-insensitively, like the aliases in the JSON output), with memory, dense BF16/FP16 "
                + "tensor throughput, memory bandwidth, board power and NVLink.%n")
public final class CatalogCommand implements Callable<Integer> {
    @Mixin TableOrJson output;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        List<GpuModel> models = GpuCatalog.standard().all();
        switch (output.format) {
            case table -> out.print(table(models));
            case json -> Json.print(out, json(models));
        }
        out.flush();
        return 0;
    }

    static String table(List<GpuModel> models) {
        TextTable t = new TextTable("ID", "MEMORY", "BF16 TFLOPS", "FP16 TFLOPS", "BANDWIDTH", "TDP", "IDLE", "NVLINK", "PRODUCT")
                .alignRight(1, 2, 3, 4, 5, 6);
        for (GpuModel m : models) {
            t.row(m.id(),
                    TextTable.number(m.memoryMib() / 1024.0) + " GiB",
                    m.bf16Tflops() > 0 ? TextTable.number(m.bf16Tflops()) : "-",
                    m.fp16Tflops() > 0 ? TextTable.number(m.fp16Tflops()) : "-",
                    TextTable.number(m.memoryBandwidthGBs()) + " GB/s",
                    m.tdpWatts() + " W",
                    m.idleWatts() + " W",
                    m.hasNvlink() ? "NVLink" + m.nvlinkGeneration() + " " + TextTable.number(m.nvlinkBandwidthGBs()) + " GB/s" : "-",
                    m.productName());
        }
        return t.render() + "\nIDs and aliases match case-insensitively; 'gpupool catalog --output json' lists the aliases and sources.\n";
    }

    /** One object per model; the field names are part of the command-line contract (snake_case, like simulate's). */
    static List<Map<String, Object>> json(List<GpuModel> models) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (GpuModel m : models) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("id", m.id());
            o.put("product_name", m.productName());
            o.put("memory_mib", m.memoryMib());
            o.put("bf16_tflops", m.bf16Tflops());
            o.put("fp16_tflops", m.fp16Tflops());
            o.put("memory_bandwidth_gbs", m.memoryBandwidthGBs());
            o.put("tdp_watts", m.tdpWatts());
            o.put("idle_watts", m.idleWatts());
            o.put("nvlink_generation", m.nvlinkGeneration());
            o.put("nvlink_bandwidth_gbs", m.nvlinkBandwidthGBs());
            o.put("aliases", m.aliases());
            o.put("source", m.source());
            rows.add(o);
        }
        return rows;
    }
}
