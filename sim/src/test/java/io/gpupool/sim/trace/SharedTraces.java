package io.gpupool.sim.trace;

import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The public traces (Philly, Alibaba openb, Helios) that the repository does not ship (docs/traces.md, "Getting the real
 * traces"): in {@code $GPUPOOL_TRACES} when set, else in {@code ../shared/traces} beside the checkout (the project's own
 * machines). A test that needs a missing file is skipped with a line naming the path and where to get it, so a fresh clone
 * passes; a user who downloaded the traces runs these tests with {@code GPUPOOL_TRACES=/path/to/traces}.
 */
public final class SharedTraces {
    /** The environment variable naming the folder laid out as docs/traces.md says. */
    public static final String ENV = "GPUPOOL_TRACES";

    private SharedTraces() {}

    /** The traces' folder: {@code $GPUPOOL_TRACES}, else {@code ../shared/traces} beside the repository root. */
    public static Path root() {
        String env = System.getenv(ENV);
        if (env != null && !env.isBlank()) return Path.of(env).toAbsolutePath().normalize();
        return Path.of(System.getProperty("gpupool.repo.root", ".")).resolve("../shared/traces").toAbsolutePath().normalize();
    }

    /** The file {@code relative} to {@link #root()}; skips the calling test (with the reason) where it is absent. */
    public static Path require(String relative) {
        Path p = root().resolve(relative).normalize();
        if (!Files.isRegularFile(p)) {
            String why = skipReason(p);
            System.err.println("gpupool: " + why);
            Assumptions.abort(why);
        }
        return p;
    }

    /** The one line a skipped test shows. */
    public static String skipReason(Path missing) {
        return "skipped: " + missing + " not found; download the public traces (docs/traces.md, \"Getting the real traces\") and set "
                + ENV + " to their folder (default: ../shared/traces beside the checkout)";
    }
}
