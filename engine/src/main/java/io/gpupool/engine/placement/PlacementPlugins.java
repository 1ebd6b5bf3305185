package io.gpupool.engine.placement;

import io.gpupool.engine.placement.plugins.BinpackGpuSelector;
import io.gpupool.engine.placement.plugins.FgdGpuSelector;
import io.gpupool.engine.placement.plugins.Filters;
import io.gpupool.engine.placement.plugins.Scorers;
import io.gpupool.engine.placement.plugins.SpreadGpuSelector;
import io.gpupool.model.SpecException;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** Placement plugins by name. A new scorer or GPU policy is one class plus one line here. */
public final class PlacementPlugins {
    private static final Map<String, Supplier<ScorePlugin>> SCORERS = new LinkedHashMap<>();
    private static final Map<String, Supplier<GpuSelector>> GPU_POLICIES = new LinkedHashMap<>();

    static {
        SCORERS.put("binpack", Scorers.Binpack::new);
        SCORERS.put("spread", Scorers.Spread::new);
        SCORERS.put("best-fit", Scorers.BestFit::new);
        SCORERS.put("topology", Scorers.Topology::new);
        SCORERS.put("fgd", Scorers.Fgd::new);

        GPU_POLICIES.put("binpack", BinpackGpuSelector::new);
        GPU_POLICIES.put("spread", SpreadGpuSelector::new);
        GPU_POLICIES.put("fgd", FgdGpuSelector::new);
    }

    private PlacementPlugins() {}

    /** Filters in the order they run: cheap checks first. */
    public static List<FilterPlugin> defaultFilters() {
        return List.of(new Filters.HealthFilter(), new Filters.ModelFilter(), new Filters.CapacityFilter(), new Filters.HostFilter());
    }

    public static ScorePlugin scorer(String name) {
        Supplier<ScorePlugin> s = SCORERS.get(name);
        if (s == null) throw new SpecException("placement", "scorer", "unknown scorer '" + name + "'; known: " + String.join(", ", SCORERS.keySet()));
        return s.get();
    }

    public static GpuSelector gpuPolicy(String name) {
        Supplier<GpuSelector> s = GPU_POLICIES.get(name);
        if (s == null) throw new SpecException("placement", "gpu-policy", "unknown GPU policy '" + name + "'; known: " + String.join(", ", GPU_POLICIES.keySet()));
        return s.get();
    }

    public static List<String> scorerNames() { return List.copyOf(SCORERS.keySet()); }

    public static List<String> gpuPolicyNames() { return List.copyOf(GPU_POLICIES.keySet()); }
}
