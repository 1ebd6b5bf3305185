package io.gpupool.sim.trace;

import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The public traces in {@code ../shared/traces} beside the checkout. Tests that need them are skipped, with
 * the reason, where they are absent (a user's clone: see docs/results-philly.md for the downloads).
 */
public final class SharedTraces {
    private SharedTraces() {}

    public static Path require(String relative) {
        String root = System.getProperty("gpupool.repo.root", ".");
        Path p = Path.of(root).resolve("../shared/traces").resolve(relative).normalize();
        Assumptions.assumeTrue(Files.isRegularFile(p), "skipped: " + p + " not found (the public traces live in ../shared/traces beside the checkout)");
        return p;
    }
}
