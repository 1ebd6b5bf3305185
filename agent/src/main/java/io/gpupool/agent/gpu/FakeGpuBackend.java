package io.gpupool.agent.gpu;

import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GpuProcess;
import io.gpupool.agent.protocol.GpuSample;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuModel;
import io.gpupool.model.SpecException;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Made-up GPUs for demos and tests: {@code --fake-gpus 8xA100-80GB,8xL40S} gives a node 16 GPUs of two
 * catalog models, with NVLink domains as the catalog says such a server has. UUIDs are derived from a
 * seed (the node name) and the position, so they are the same after a restart and differ between agents.
 *
 * <p>Telemetry follows the jobs that run ({@link GpuLoad}): memory used is the memory granted (all of it
 * for a whole GPU), utilization the compute shares, power moves between idle (15% of the board's TDP) and
 * TDP with utilization, temperature between 32 and 82 °C. Every job process shows as a compute process.
 */
public final class FakeGpuBackend implements GpuBackend {

    public static final String NAME = "fake";
    private static final Pattern ITEM = Pattern.compile("\\s*(\\d+)\\s*[xX]\\s*(\\S.*?)\\s*");
    private static final double IDLE_POWER_FRACTION = 0.15;

    private final List<GpuInfo> gpus;
    private final List<GpuModel> models;
    private volatile GpuLoad load = GpuLoad.IDLE;

    /**
     * @param spec {@code COUNTxMODEL[,COUNTxMODEL...]}, models by catalog id or alias
     * @param seed what makes this node's UUIDs its own (the node name)
     * @throws SpecException naming the item and the rule it breaks
     */
    public FakeGpuBackend(String spec, String seed) {
        List<GpuModel> perGpu = parse(spec);
        List<GpuInfo> list = new ArrayList<>();
        List<TreeSet<Integer>> peers = new ArrayList<>();
        for (int i = 0; i < perGpu.size(); i++) peers.add(new TreeSet<>());
        int start = 0;
        while (start < perGpu.size()) {
            GpuModel m = perGpu.get(start);
            int end = start;
            while (end < perGpu.size() && perGpu.get(end) == m) end++;
            for (List<Integer> domain : GpuCatalog.defaultNvlinkDomains(m, end - start)) {
                for (int a : domain) for (int b : domain) if (a != b) peers.get(start + a).add(start + b);
            }
            start = end;
        }
        for (int i = 0; i < perGpu.size(); i++) {
            GpuModel m = perGpu.get(i);
            String uuid = "GPU-" + UUID.nameUUIDFromBytes(("gpupool-fake/" + seed + "/" + i + "/" + m.id())
                    .getBytes(StandardCharsets.UTF_8));
            list.add(new GpuInfo(i, uuid, m.productName(), m.id(), m.memoryMib(), List.copyOf(peers.get(i))));
        }
        this.gpus = List.copyOf(list);
        this.models = List.copyOf(perGpu);
    }

    /** The model of every GPU, in index order, from a {@code --fake-gpus} value. */
    static List<GpuModel> parse(String spec) {
        if (spec == null || spec.isBlank()) {
            throw new SpecException("--fake-gpus", null, "must name at least one group, e.g. 8xA100-80GB,8xL40S");
        }
        List<GpuModel> out = new ArrayList<>();
        String[] items = spec.split(",", -1);
        for (int i = 0; i < items.length; i++) {
            String where = "--fake-gpus item " + (i + 1) + " '" + items[i].trim() + "'";
            Matcher m = ITEM.matcher(items[i]);
            if (!m.matches()) throw new SpecException(where, null, "expected COUNTxMODEL, e.g. 8xA100-80GB");
            int count;
            try {
                count = Integer.parseInt(m.group(1));
            } catch (NumberFormatException e) {
                count = -1;
            }
            if (count < 1 || count > 64) throw new SpecException(where, "count", "must be in 1..64, got " + m.group(1));
            GpuModel model = GpuCatalog.standard().require(m.group(2), where);
            for (int k = 0; k < count; k++) out.add(model);
        }
        return out;
    }

    /** Makes telemetry follow {@code load} (the agent passes its job runner). */
    public void follow(GpuLoad load) {
        this.load = load == null ? GpuLoad.IDLE : load;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public GpuDiscovery discover() {
        return new GpuDiscovery(NAME, "fake", null, gpus);
    }

    @Override
    public List<GpuSample> sample() {
        List<GpuLoad.Use> uses = load.currentUse();
        List<GpuSample> out = new ArrayList<>(gpus.size());
        for (GpuInfo g : gpus) {
            GpuModel m = models.get(g.index());
            long memUsed = 0;
            int milli = 0;
            List<GpuProcess> processes = new ArrayList<>();
            for (GpuLoad.Use u : uses) {
                if (!u.gpuUuid().equals(g.uuid())) continue;
                long mem = u.memoryMib() > 0 ? u.memoryMib() : g.memoryTotalMib();
                memUsed += mem;
                milli += u.milli();
                processes.add(new GpuProcess(g.uuid(), u.pid(), mem));
            }
            int util = Math.min(100, milli / 10);
            double idle = m.tdpWatts() * IDLE_POWER_FRACTION;
            double watts = Math.round((idle + (m.tdpWatts() - idle) * util / 100.0) * 100) / 100.0;
            out.add(new GpuSample(g.index(), g.uuid(), util, Math.min(memUsed, g.memoryTotalMib()), g.memoryTotalMib(),
                    32 + util / 2, watts, processes, null));
        }
        return out;
    }

    @Override
    public String toString() {
        return "fake(" + gpus.size() + " GPUs)";
    }
}
