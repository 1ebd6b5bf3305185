package io.gpupool.optimize;

import io.gpupool.engine.batch.BatchPlacer;
import io.gpupool.engine.batch.BatchPlacers;
import io.gpupool.model.SpecException;

import java.util.List;
import java.util.Locale;

/**
 * Registers the solvers as batch placers ({@code META-INF/services}), so a scheduler configured with
 * {@code --batch NAME[:OPTIONS]} finds them by name. Options, comma-separated: {@code window=N} (jobs per
 * batch, default 64), {@code seconds=S} (budget per round, default 1), {@code seed=N}, {@code workers=N}
 * (CP-SAT), {@code iterations=N} (GA/ACO/PSO), e.g. {@code cpsat:window=200,seconds=2}.
 */
public final class OptimizeBatchPlacers implements BatchPlacers.Provider {
    public static final int DEFAULT_WINDOW = 64;
    public static final double DEFAULT_SECONDS = 1.0;

    @Override
    public List<String> names() {
        return Solvers.names();
    }

    @Override
    public BatchPlacer create(String name, String options) {
        int window = DEFAULT_WINDOW;
        double seconds = DEFAULT_SECONDS;
        long seed = 1;
        int workers = 1;
        int iterations = 0;
        String where = "batch '" + name + (options.isEmpty() ? "" : ":" + options) + "'";
        for (String opt : options.isEmpty() ? new String[0] : options.split(",")) {
            int eq = opt.indexOf('=');
            if (eq < 0) throw new SpecException(where, opt.trim(), "options are KEY=VALUE: window, seconds, seed, workers, iterations");
            String key = opt.substring(0, eq).trim().toLowerCase(Locale.ROOT);
            String value = opt.substring(eq + 1).trim();
            try {
                switch (key) {
                    case "window" -> window = Integer.parseInt(value);
                    case "seconds" -> seconds = Double.parseDouble(value);
                    case "seed" -> seed = Long.parseLong(value);
                    case "workers" -> workers = Integer.parseInt(value);
                    case "iterations" -> iterations = Integer.parseInt(value);
                    default -> throw new SpecException(where, key, "unknown option; known: window, seconds, seed, workers, iterations");
                }
            } catch (NumberFormatException e) {
                throw new SpecException(where, key, "must be a number, got '" + value + "'");
            }
        }
        if (window < 1) throw new SpecException(where, "window", "must be >= 1, got " + window);
        return new SolverBatchPlacer(Solvers.create(name), window, new SolveSettings(seconds, seed, workers, iterations));
    }
}
