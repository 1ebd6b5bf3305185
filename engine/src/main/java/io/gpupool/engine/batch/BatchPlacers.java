package io.gpupool.engine.batch;

import io.gpupool.model.SpecException;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Batch placers by name. Modules that provide them register a {@link Provider} with {@link ServiceLoader}
 * ({@code META-INF/services/io.gpupool.engine.batch.BatchPlacers$Provider}), so the simulator and the
 * service can name one in their configuration without depending on its module.
 */
public final class BatchPlacers {
    private BatchPlacers() {}

    /** Creates placers from a spec {@code NAME[:OPTIONS]}; the options are the provider's. */
    public interface Provider {
        List<String> names();

        BatchPlacer create(String name, String options);
    }

    /** The placer for {@code spec}, e.g. {@code cpsat} or {@code ga:window=100,seconds=0.5}. */
    public static BatchPlacer create(String spec) {
        if (spec == null || spec.isBlank()) throw new SpecException("batch", "batch", "must name a solver");
        int colon = spec.indexOf(':');
        String name = (colon < 0 ? spec : spec.substring(0, colon)).trim().toLowerCase(java.util.Locale.ROOT);
        String options = colon < 0 ? "" : spec.substring(colon + 1).trim();
        for (Provider p : ServiceLoader.load(Provider.class)) {
            if (p.names().contains(name)) return p.create(name, options);
        }
        List<String> known = names();
        throw new SpecException("batch '" + spec + "'", "solver", "unknown batch placer '" + name + "'; "
                + (known.isEmpty() ? "none is installed (the optimize module is not on the class path)" : "known: " + String.join(", ", known)));
    }

    /** Every name the installed providers offer. */
    public static List<String> names() {
        List<String> out = new ArrayList<>();
        for (Provider p : ServiceLoader.load(Provider.class)) out.addAll(p.names());
        return out;
    }
}
