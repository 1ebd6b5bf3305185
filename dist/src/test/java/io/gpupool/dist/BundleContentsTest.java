package io.gpupool.dist;

import io.gpupool.cli.GpupoolCommand;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine.Model.OptionSpec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The release bundle's parts, unpacked away from the source tree: the launcher (any directory, through a link, JDK 25
 * found as ./mvnw and ./gpupool find it, or the same one line from all three), the environment files (every option of
 * `server` and `agent`), the systemd units (systemd-analyze verify, where installed) and the bash completion.
 */
class BundleContentsTest {
    private static final Path JDK17 = Path.of("/usr/lib/jvm/java-17-openjdk-amd64");

    @TempDir static Path tmp;
    static Path bundle;

    record Run(int exitCode, String stdout, String stderr) {}

    @BeforeAll
    static void unpack() throws Exception {
        bundle = Bundles.unpack(Files.createDirectory(tmp.resolve("unpacked")));
    }

    @Test
    void holdsTheLauncherTheJarTheSettingsTheUnitsAndTheCompletion() {
        for (String f : List.of("bin/gpupool", "lib/gpupool.jar", "lib/find-jdk.sh", "lib/java-options.sh", "conf/server.env", "conf/agent.env",
                "conf/pool-config.yaml", "systemd/gpupool-server.service", "systemd/gpupool-agent.service", "completion/gpupool.bash", "doc/install.md"))
            assertThat(bundle.resolve(f)).as(f).isRegularFile();
        assertThat(bundle.resolve("bin/gpupool")).isExecutable();
    }

    @Test
    void theLauncherRunsFromAnyDirectoryThroughALinkWhereTheDefaultJavaIsOlder() throws Exception {
        Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere/bin"));
        Path link = elsewhere.resolve("gpupool");
        if (!Files.exists(link)) Files.createSymbolicLink(link, bundle.resolve("bin/gpupool"));
        Map<String, String> env = new HashMap<>();
        // JAVA_HOME at JDK 17 where it is installed, else unset: either way the launcher finds JDK 25 by itself
        if (Files.isDirectory(JDK17)) env.put("JAVA_HOME", JDK17.toString());
        else env.put("JAVA_HOME", null);
        if (!System.getProperty("java.home").startsWith("/usr/lib/jvm/")) env.put("JAVA_HOME", System.getProperty("java.home"));
        Run r = run(elsewhere, env, link.toString(), "--version");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).startsWith("gpupool " + System.getProperty("gpupool.version"));
    }

    /** ./mvnw, like the launchers, runs Maven on JDK 25 where JAVA_HOME names JDK 17 (or nothing). */
    @Test
    void mvnwFindsJdk25WhereJavaHomeIsOlder() throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("JAVA_HOME", Files.isDirectory(JDK17) ? JDK17.toString() : null);
        if (!System.getProperty("java.home").startsWith("/usr/lib/jvm/")) env.put("JAVA_HOME", System.getProperty("java.home"));
        Run r = run(tmp, env, Bundles.repoRoot().resolve("mvnw").toString(), "-v");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).containsPattern("Java version: (2[5-9]|[3-9][0-9])");
    }

    /** Where no JDK 25 is to be found, the bundle's launcher, the repository's ./gpupool and ./mvnw all stop with the same line. */
    @Test
    void withoutAJdk25TheThreeLaunchersStopWithTheSameOneLine() throws Exception {
        Path fake = fakeJdk17(tmp.resolve("jdk-17-fake"));
        Path noJdks = Files.createDirectories(tmp.resolve("no-jdks"));
        Map<String, String> env = new HashMap<>();
        env.put("JAVA_HOME", fake.toString());
        env.put("GPUPOOL_JDK_DIRS", noJdks.toString());
        env.put("PATH", fake.resolve("bin") + ":/usr/bin:/bin");
        Path root = Bundles.repoRoot();
        List<Run> runs = new ArrayList<>();
        runs.add(run(tmp, env, bundle.resolve("bin/gpupool").toString(), "--version"));
        runs.add(run(tmp, env, root.resolve("gpupool").toString(), "--version"));
        runs.add(run(tmp, env, root.resolve("mvnw").toString(), "-v"));
        String expected = "gpupool needs JDK 25 or newer: set JAVA_HOME to a JDK 25 installation (JAVA_HOME is JDK 17 at " + fake
                + ", none in " + noJdks + ", java on PATH is JDK 17).\n";
        for (Run r : runs) {
            assertThat(r.exitCode()).isEqualTo(1);
            assertThat(r.stderr()).isEqualTo(expected);
            assertThat(r.stdout()).isEmpty();
        }
    }

    @Test
    void theEnvironmentFilesListEveryOptionOfServerAndAgent() throws IOException {
        var cli = GpupoolCommand.newCommandLine();
        for (String command : List.of("server", "agent")) {
            String env = Files.readString(bundle.resolve("conf/" + command + ".env"));
            for (OptionSpec o : cli.getSubcommands().get(command).getCommandSpec().options()) {
                if (o.usageHelp() || o.versionHelp()) continue;
                assertThat(env).as("conf/%s.env names %s", command, o.longestName()).containsPattern("(?m)^#\\s+" + o.longestName() + "\\b");
            }
        }
    }

    @Test
    void theUnitsRestartOnFailureAndLetJobsOutliveTheAgent() throws IOException {
        String server = Files.readString(bundle.resolve("systemd/gpupool-server.service"));
        String agent = Files.readString(bundle.resolve("systemd/gpupool-agent.service"));
        assertThat(server).contains("\nUser=gpupool\n", "\nStateDirectory=gpupool\n", "\nRestart=on-failure\n",
                "\nExecStart=/opt/gpupool/bin/gpupool server --data /var/lib/gpupool $GPUPOOL_SERVER_ARGS\n");
        assertThat(agent).contains("\nUser=root\n", "\nKillMode=process\n", "\nRestart=on-failure\n",
                "\nExecStart=/opt/gpupool/bin/gpupool agent --work-dir /var/lib/gpupool-agent $GPUPOOL_AGENT_ARGS\n");
    }

    @Test
    void systemdAnalyzeVerifiesTheUnits() throws Exception {
        Path sa = Path.of("/usr/bin/systemd-analyze");
        Bundles.needTool(Files.isExecutable(sa), "systemd-analyze is not installed: the units were not verified (apt-get install systemd)");
        // as installed: ExecStart's /opt/gpupool is this bundle (verify checks that the command exists)
        Path units = Files.createDirectories(tmp.resolve("units"));
        List<String> command = new ArrayList<>(List.of(sa.toString(), "verify", "--man=no"));
        for (String u : List.of("gpupool-server.service", "gpupool-agent.service")) {
            Files.writeString(units.resolve(u), Files.readString(bundle.resolve("systemd/" + u)).replace("/opt/gpupool/", bundle + "/"));
            command.add(units.resolve(u).toString());
        }
        Run r = run(units, Map.of(), command.toArray(String[]::new));
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout() + r.stderr()).isEmpty();
    }

    @Test
    void theCompletionCompletesCommandsAndOptions() throws Exception {
        String script = ". " + bundle.resolve("completion/gpupool.bash") + "\n"
                + "COMP_WORDS=(gpupool ser); COMP_CWORD=1; COMP_LINE='gpupool ser'; COMP_POINT=11; _complete_gpupool; echo \"${COMPREPLY[*]}\"\n"
                + "COMP_WORDS=(gpupool agent --fake); COMP_CWORD=2; COMP_LINE='gpupool agent --fake'; COMP_POINT=20; _complete_gpupool; echo \"${COMPREPLY[*]}\"\n";
        Run r = run(tmp, Map.of(), "bash", "-c", script);
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        List<String> lines = r.stdout().lines().toList();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).isEqualTo("server");
        assertThat(lines.get(1).split(" ")).containsExactlyInAnyOrder("--fake-device-dir", "--fake-gpus");
    }

    /**
     * A short simulate run through the launcher trains a start-up cache for its kind of run (here: synthetic trace,
     * las) in the user's cache directory and the next run of that kind starts from it; the cache never changes what
     * the replay prints, a failed run leaves no cache, and GPUPOOL_AOT=0 or another kind does not touch it.
     */
    @Test
    void shortSimulateRunsTrainAndReuseAStartUpCachePerKindOfRun() throws Exception {
        Path cache = tmp.resolve("user-cache");
        Map<String, String> env = new HashMap<>();
        env.put("JAVA_HOME", System.getProperty("java.home"));
        env.put("XDG_CACHE_HOME", cache.toString());
        String launcher = bundle.resolve("bin/gpupool").toString();
        String[] las = {launcher, "simulate", "--synthetic", "2000,load=0.9", "--seed", "5", "--cluster", "4x8:A100-80GB",
                "--policy", "las", "--quiet", "--output", "json"};
        Path dir = cache.resolve("gpupool/aot"), lasCache = dir.resolve("simulate-replay-synthetic-las.aot");

        Run training = run(tmp, env, las);
        assertThat(training.exitCode()).as(training.stderr()).isZero();
        assertThat(training.stderr()).as("the JVM's notes on assembling the cache are filtered out").isEmpty();
        assertThat(fileNames(dir)).containsExactly(lasCache.getFileName().toString());
        var trained = Files.getLastModifiedTime(lasCache);

        Run cached = run(tmp, env, las);
        assertThat(cached.exitCode()).as(cached.stderr()).isZero();
        assertThat(cached.stdout()).isEqualTo(training.stdout()).contains("\"policy\" : \"las\"");
        assertThat(Files.getLastModifiedTime(lasCache)).as("the second run uses the cache, it does not train again").isEqualTo(trained);

        Map<String, String> off = new HashMap<>(env);
        off.put("GPUPOOL_AOT", "0");
        Run without = run(tmp, off, las);
        assertThat(without.stdout()).isEqualTo(training.stdout());

        String[] bad = las.clone();
        bad[bad.length - 4] = "nope";
        Run refused = run(tmp, env, bad);
        assertThat(refused.exitCode()).isEqualTo(2);
        assertThat(refused.stderr()).contains("unknown policy 'nope'");
        assertThat(fileNames(dir)).containsExactly(lasCache.getFileName().toString());

        String[] fcfs = las.clone();
        fcfs[fcfs.length - 4] = "fcfs";
        Run other = run(tmp, env, fcfs);
        assertThat(other.exitCode()).as(other.stderr()).isZero();
        assertThat(fileNames(dir)).containsExactlyInAnyOrder(lasCache.getFileName().toString(), "simulate-replay-synthetic-fcfs.aot");
    }

    /**
     * The launcher's short replays inline less at C2's hot calls (cheaper compiles, see simulate-cache.sh), and least
     * when several policies share the cores; a user's own setting in GPUPOOL_JAVA_OPTS wins.
     */
    @Test
    void shortSimulateRunsInlineLessAndLeastForSeveralPolicies() throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("JAVA_HOME", System.getProperty("java.home"));
        env.put("XDG_CACHE_HOME", tmp.resolve("inline-cache").toString());
        env.put("GPUPOOL_JAVA_OPTS", "-XX:+PrintCommandLineFlags");
        String launcher = bundle.resolve("bin/gpupool").toString();
        java.util.function.Function<String, Run> replay = policies -> {
            try {
                return run(tmp, env, launcher, "simulate", "--synthetic", "300", "--seed", "5", "--cluster", "2x8:A100-80GB",
                        "--policy", policies, "--quiet", "--output", "csv");
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        };
        Run one = replay.apply("las"), several = replay.apply("las,fcfs");
        assertThat(one.exitCode()).as(one.stderr()).isZero();
        assertThat(several.exitCode()).as(several.stderr()).isZero();
        // the JVM prints its flags with its other notes, on stderr
        assertThat(one.stderr()).contains("-XX:FreqInlineSize=100").doesNotContain("-XX:FreqInlineSize=60");
        assertThat(several.stderr()).contains("-XX:FreqInlineSize=60").doesNotContain("-XX:FreqInlineSize=100");
        env.put("GPUPOOL_JAVA_OPTS", "-XX:+PrintCommandLineFlags -XX:FreqInlineSize=200");
        Run own = replay.apply("las");
        assertThat(own.exitCode()).as(own.stderr()).isZero();
        assertThat(own.stderr()).contains("-XX:FreqInlineSize=200").doesNotContain("-XX:FreqInlineSize=100");
    }

    private static List<String> fileNames(Path dir) throws IOException {
        try (var files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).toList();
        }
    }

    /** A directory that looks like a JDK 17 home to the launchers: a release file and a java that says 17. */
    private static Path fakeJdk17(Path home) throws IOException {
        Files.createDirectories(home.resolve("bin"));
        Files.writeString(home.resolve("release"), "JAVA_VERSION=\"17.0.2\"\n");
        Path java = home.resolve("bin/java");
        Files.writeString(java, "#!/bin/sh\necho 'openjdk version \"17.0.2\"' >&2\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        return home;
    }

    private static Run run(Path dir, Map<String, String> env, String... command) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        env.forEach((k, v) -> {
            if (v == null) pb.environment().remove(k);
            else pb.environment().put(k, v);
        });
        Path out = Files.createTempFile(tmp, "out", ".txt"), err = Files.createTempFile(tmp, "err", ".txt");
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " still running after 60 s");
        }
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }
}
