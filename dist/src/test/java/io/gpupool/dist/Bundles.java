package io.gpupool.dist;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The release bundle this build made (dist/target/gpupool-VERSION.tar.gz, from the pom's system properties). */
final class Bundles {
    private Bundles() {}

    static Path tarball() {
        Path p = Path.of(System.getProperty("gpupool.bundle", "target/gpupool-bundle-missing.tar.gz"));
        if (!Files.isRegularFile(p)) throw new IllegalStateException("no bundle at " + p + ": run the tests through Maven (package builds it)");
        return p;
    }

    /** gpupool-VERSION: the bundle's top directory and its file name without .tar.gz. */
    static String name() {
        return "gpupool-" + System.getProperty("gpupool.version");
    }

    static Path repoRoot() {
        return Path.of(System.getProperty("gpupool.repo.root", ".."));
    }

    /** Unpacks the bundle into dir; returns its top directory. */
    static Path unpack(Path dir) throws IOException, InterruptedException {
        run(dir, "tar", "-xzf", tarball().toAbsolutePath().toString());
        return dir.resolve(name());
    }

    /**
     * Puts the bundle where docs/install.md's install step expects it (its BUNDLE= line must name this version), and a
     * copy named gpupool-0.2.0 for the upgrade step.
     */
    static void placeBundles(Path home, InstallDoc doc) throws IOException, InterruptedException {
        placeBundle(home, doc);
        Path work = Files.createDirectory(home.resolve("repack"));
        unpack(work);
        Files.move(work.resolve(name()), work.resolve("gpupool-0.2.0"));
        run(work, "sh", "-c", "tar -cf - gpupool-0.2.0 | gzip -1 > ../gpupool-0.2.0.tar.gz && rm -rf gpupool-0.2.0");
        Files.delete(work);
    }

    /** Puts the bundle where docs/install.md's install step expects it (its BUNDLE= line must name this version). */
    static void placeBundle(Path home, InstallDoc doc) throws IOException {
        Matcher m = Pattern.compile("(?m)^BUNDLE=(\\S+)").matcher(doc.step("install"));
        if (!m.find() || !m.group(1).equals(name()))
            throw new AssertionError("docs/install.md's install step must name the bundle this build makes: BUNDLE=" + name());
        Files.copy(tarball(), home.resolve(name() + ".tar.gz"));
    }

    /** A tool a test needs: where it is missing the test is skipped with the message, or fails in CI (GPUPOOL_CI=1, .ci/run installs it). */
    static void needTool(boolean present, String message) {
        if (present) return;
        if ("1".equals(System.getenv("GPUPOOL_CI"))) throw new AssertionError(message);
        org.junit.jupiter.api.Assumptions.abort(message);
    }

    static void run(Path dir, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(List.of(command)).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
    }
}
