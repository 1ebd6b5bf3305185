package io.gpupool.model;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * What was built: the project version and the git commit of the sources, written into
 * {@code build-info.properties} by Maven (model/pom.xml). It lives in the module every other one depends on, so the
 * command line, the server ({@code GET /api/v1/version}) and the agent report the same build.
 *
 * @param version the Maven project version, e.g. {@code 0.1.0-SNAPSHOT}; "unknown" when run from unfiltered sources
 * @param commit  the abbreviated commit hash; "unknown" when built without git history (e.g. from a source tarball)
 * @param dirty   whether the working tree had uncommitted changes to tracked files; null when not known
 */
public record BuildInfo(String version, String commit, Boolean dirty) {
    public static final String UNKNOWN = "unknown";
    private static final BuildInfo CURRENT = read();

    /** This build's. */
    public static BuildInfo current() {
        return CURRENT;
    }

    /** {@code 0.1.0-SNAPSHOT (commit 660cb4c077, modified)}, or {@code (commit unknown)} without git. */
    public String describe() {
        return version + " (commit " + commit + (Boolean.TRUE.equals(dirty) ? ", modified" : "") + ")";
    }

    static BuildInfo of(Properties p) {
        String dirty = known(p.getProperty("dirty"));
        return new BuildInfo(orUnknown(p.getProperty("version")), orUnknown(p.getProperty("commit")),
                dirty == null ? null : Boolean.valueOf(dirty));
    }

    private static BuildInfo read() {
        Properties p = new Properties();
        try (InputStream in = BuildInfo.class.getResourceAsStream("build-info.properties")) {
            if (in != null) p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read build-info.properties from the class path", e);
        }
        return of(p);
    }

    /** Null for a missing value or one Maven left unfiltered ({@code ${git.dirty}}: no git). */
    private static String known(String v) {
        if (v == null) return null;
        v = v.trim();
        return v.isEmpty() || v.startsWith("${") ? null : v;
    }

    private static String orUnknown(String v) {
        String k = known(v);
        return k == null ? UNKNOWN : k;
    }
}
