package io.gpupool.agent.gpu;

import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GpuProcess;
import io.gpupool.agent.protocol.GpuSample;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads what nvidia-smi prints. nvidia-smi marks a value it cannot give with a bracketed word
 * ({@code [N/A]}, {@code [Not Supported]}, {@code [Insufficient Permissions]}, {@code [Unknown Error]},
 * {@code [GPU is lost]}); older versions print a bare {@code N/A}. Every such value becomes null. A line
 * that is not what the query asked for is an error naming the line and the field.
 */
final class NvidiaSmiOutput {

    /** The --query-gpu fields, in the order {@link NvidiaSmiBackend} asks for them. */
    static final List<String> GPU_FIELDS = List.of("index", "uuid", "name", "memory.total", "memory.used",
            "memory.free", "utilization.gpu", "temperature.gpu", "power.draw", "driver_version");
    /** The --query-compute-apps fields. */
    static final List<String> APP_FIELDS = List.of("gpu_uuid", "pid", "used_memory");

    private static final Pattern ANSI = Pattern.compile("\u001B\\[[0-9;]*m");
    private static final Pattern NVLINK = Pattern.compile("NV\\d+");
    private static final Pattern CUDA_VERSION = Pattern.compile("(?m)^\\s*CUDA Version\\s*:\\s*(\\S+)\\s*$");
    private static final Pattern DRIVER_VERSION = Pattern.compile("(?m)^\\s*Driver Version\\s*:\\s*(\\S+)\\s*$");

    /** One row of --query-gpu (memory in MiB and power in W: the query runs with nounits). */
    record GpuRow(int index, String uuid, String name, Long memoryTotalMib, Long memoryUsedMib, Long memoryFreeMib,
                  Integer utilizationPercent, Integer temperatureC, Double powerWatts, String driverVersion) {}

    private NvidiaSmiOutput() {
    }

    static List<GpuRow> gpus(String csv) throws GpuBackendException {
        List<GpuRow> rows = new ArrayList<>();
        String[] lines = csv.split("\\R");
        for (int ln = 0; ln < lines.length; ln++) {
            String line = lines[ln];
            if (line.isBlank()) continue;
            List<String> f = fields(line, GPU_FIELDS.size(), 2, "--query-gpu", ln + 1);
            Line at = new Line("--query-gpu", ln + 1);
            rows.add(new GpuRow(at.integer(f, 0, false), at.text(f, 1), at.text(f, 2), at.longValue(f, 3),
                    at.longValue(f, 4), at.longValue(f, 5), at.integer(f, 6, true), at.integer(f, 7, true),
                    at.decimal(f, 8), blankToNull(f.get(9))));
        }
        return rows;
    }

    static List<GpuProcess> apps(String csv) throws GpuBackendException {
        List<GpuProcess> out = new ArrayList<>();
        String[] lines = csv.split("\\R");
        for (int ln = 0; ln < lines.length; ln++) {
            String line = lines[ln];
            // Some versions print a sentence instead of an empty result.
            if (line.isBlank() || line.startsWith("No running")) continue;
            List<String> f = fields(line, APP_FIELDS.size(), -1, "--query-compute-apps", ln + 1);
            Line at = new Line("--query-compute-apps", ln + 1);
            Long pid = at.longValue(f, 1);
            if (pid == null) throw at.error(APP_FIELDS.get(1), "is not available ('" + f.get(1) + "')");
            out.add(new GpuProcess(at.text(f, 0), pid, at.longValue(f, 2)));
        }
        return out;
    }

    /**
     * NVLink peers from {@code nvidia-smi topo -m}: the matrix's GPU rows and columns, where an entry
     * {@code NV<n>} (a bonded set of n links) joins two GPUs; other entries (PIX, PXB, PHB, NODE, SYS) are PCIe.
     */
    static List<List<Integer>> nvlinkPeers(String topo, int gpuCount) {
        List<TreeSet<Integer>> peers = new ArrayList<>();
        for (int i = 0; i < gpuCount; i++) peers.add(new TreeSet<>());
        for (String raw : topo.split("\\R")) {
            String[] cells = ANSI.matcher(raw).replaceAll("").trim().split("\\s+");
            if (cells.length < 2 || !cells[0].matches("GPU\\d+")) continue;
            int row = Integer.parseInt(cells[0].substring(3));
            if (row >= gpuCount) continue;
            for (int col = 0; col < gpuCount && col + 1 < cells.length; col++) {
                if (col != row && NVLINK.matcher(cells[col + 1]).matches()) {
                    peers.get(row).add(col);
                    peers.get(col).add(row);
                }
            }
        }
        return peers.stream().map(s -> (List<Integer>) List.copyOf(s)).toList();
    }

    /** The "CUDA Version" line of {@code nvidia-smi -q}; null when absent. */
    static String cudaVersion(String query) {
        Matcher m = CUDA_VERSION.matcher(query);
        return m.find() && !isMissing(m.group(1)) ? m.group(1) : null;
    }

    /** The "Driver Version" line of {@code nvidia-smi -q}; null when absent. */
    static String driverVersion(String query) {
        Matcher m = DRIVER_VERSION.matcher(query);
        return m.find() && !isMissing(m.group(1)) ? m.group(1) : null;
    }

    static GpuInfo toInfo(GpuRow r, List<Integer> peers) {
        return GpuDiscovery.gpu(r.index(), r.uuid(), r.name(), r.memoryTotalMib() == null ? 0 : r.memoryTotalMib(), peers);
    }

    static GpuSample toSample(GpuRow r, List<GpuProcess> processes) {
        return new GpuSample(r.index(), r.uuid(), r.utilizationPercent(), r.memoryUsedMib(), r.memoryTotalMib(),
                r.temperatureC(), r.powerWatts(),
                processes.stream().filter(p -> p.gpuUuid().equals(r.uuid())).toList(), null);
    }

    /**
     * Splits a CSV line of nvidia-smi (", " between values, no quoting). A product name may itself hold a
     * comma, so when {@code freeText} >= 0 the extra pieces are joined back into that field.
     */
    private static List<String> fields(String line, int expected, int freeText, String query, int lineNo)
            throws GpuBackendException {
        List<String> parts = new ArrayList<>(List.of(line.split(",", -1)));
        if (parts.size() > expected && freeText >= 0) {
            int extra = parts.size() - expected;
            String joined = String.join(",", parts.subList(freeText, freeText + extra + 1));
            parts.subList(freeText, freeText + extra + 1).clear();
            parts.add(freeText, joined);
        }
        if (parts.size() != expected) {
            throw new GpuBackendException("nvidia-smi " + query + " output line " + lineNo + ": expected "
                    + expected + " comma-separated values, got " + parts.size() + ": '" + line + "'");
        }
        return parts.stream().map(String::trim).toList();
    }

    static boolean isMissing(String v) {
        String t = v.trim();
        return t.isEmpty() || (t.startsWith("[") && t.endsWith("]")) || t.equalsIgnoreCase("N/A");
    }

    private static String blankToNull(String v) {
        return isMissing(v) ? null : v;
    }

    /** Where a value comes from, for error messages: the query, the line, the field name. */
    private record Line(String query, int lineNo) {
        GpuBackendException error(String field, String rule) {
            return new GpuBackendException("nvidia-smi " + query + " output line " + lineNo + ", field '" + field + "': " + rule);
        }

        private String field(int i) {
            return (query.equals("--query-gpu") ? GPU_FIELDS : APP_FIELDS).get(i);
        }

        String text(List<String> f, int i) throws GpuBackendException {
            if (isMissing(f.get(i))) throw error(field(i), "is not available ('" + f.get(i) + "')");
            return f.get(i);
        }

        Long longValue(List<String> f, int i) throws GpuBackendException {
            return parsed(f, i, Long::parseLong, "a whole number");
        }

        Integer integer(List<String> f, int i, boolean mayBeMissing) throws GpuBackendException {
            if (!mayBeMissing && isMissing(f.get(i))) throw error(field(i), "is not available ('" + f.get(i) + "')");
            Long v = longValue(f, i);
            return v == null ? null : Math.toIntExact(v);
        }

        Double decimal(List<String> f, int i) throws GpuBackendException {
            return parsed(f, i, Double::parseDouble, "a number");
        }

        /** Field {@code i} parsed, null where nvidia-smi has no value; a malformed one names the field and what was expected. */
        private <T> T parsed(List<String> f, int i, Function<String, T> parse, String expected) throws GpuBackendException {
            if (isMissing(f.get(i))) return null;
            try {
                return parse.apply(f.get(i));
            } catch (NumberFormatException e) {
                throw error(field(i), "expected " + expected + ", got '" + f.get(i) + "'");
            }
        }
    }
}
