package io.gpupool.cli;

import io.gpupool.model.SpecException;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.util.concurrent.Callable;

import static org.assertj.core.api.Assertions.assertThat;

class GpupoolCommandTest {

    @Test
    void helpListsTheSubcommands() {
        Cli.Result r = Cli.run("--help");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("Usage: gpupool", "Commands:", "catalog", "help", "Run 'gpupool COMMAND --help'");
        assertThat(r.err()).isEmpty();
    }

    @Test
    void everySubcommandHasHelp() {
        for (String name : GpupoolCommand.newCommandLine().getSubcommands().keySet()) {
            Cli.Result r = Cli.run(name, "--help");
            assertThat(r.exitCode()).as(name).isZero();
            assertThat(r.out()).as(name).contains("Usage: gpupool " + name).doesNotContain("Run 'gpupool COMMAND --help'");
        }
    }

    /**
     * Main builds only the subcommand the arguments name: its help, its version and its refusals must be what the
     * whole command tree gives.
     */
    @Test
    void aSubcommandBuiltAloneAnswersAsInTheWholeTree() {
        for (String name : GpupoolCommand.newCommandLine().getSubcommands().keySet()) {
            if (name.equals("help")) continue;   // needs its siblings: `gpupool help X` builds the whole tree
            for (String[] args : new String[][] {{name, "--help"}, {name, "--version"}, {name, "--no-such-option"}}) {
                Cli.Result alone = Cli.run(args);
                Cli.Result whole = runWholeTree(args);
                assertThat(GpupoolCommand.forArgs(args).getSubcommands()).as(name).containsOnlyKeys(name);
                assertThat(alone).as(String.join(" ", args)).isEqualTo(whole);
            }
        }
        assertThat(GpupoolCommand.forArgs("help", "simulate").getSubcommands()).hasSameSizeAs(GpupoolCommand.SUBCOMMANDS);
        assertThat(GpupoolCommand.forArgs("--help").getSubcommands()).hasSameSizeAs(GpupoolCommand.SUBCOMMANDS);
        assertThat(GpupoolCommand.forArgs("simulat").getSubcommands()).hasSameSizeAs(GpupoolCommand.SUBCOMMANDS);
    }

    private static Cli.Result runWholeTree(String... args) {
        CommandLine cmd = GpupoolCommand.newCommandLine();
        java.io.StringWriter out = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        cmd.setOut(new java.io.PrintWriter(out, true));
        cmd.setErr(new java.io.PrintWriter(err, true));
        int code = cmd.execute(args);
        return new Cli.Result(code, out.toString(), err.toString());
    }

    @Test
    void versionComesFromTheBuild() {
        Cli.Result r = Cli.run("--version");
        assertThat(r.exitCode()).isZero();
        // the first line: version and commit (the commit is "unknown" only in a build without git history)
        assertThat(r.out().lines().findFirst()).hasValue("gpupool " + io.gpupool.model.BuildInfo.current().describe());
        assertThat(r.out()).doesNotContain("${");
        assertThat(GpupoolCommand.version()).matches("\\d+\\.\\d+\\.\\d+.*");
    }

    @Test
    void noSubcommandIsAUsageError() {
        Cli.Result r = Cli.run();
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("gpupool: Missing required subcommand", "Usage: gpupool");
    }

    @Test
    void unknownOptionExits2WithMessageAndUsage() {
        Cli.Result r = Cli.run("catalog", "--bogus");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("gpupool: Unknown option: '--bogus'", "Usage: gpupool catalog");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void unknownSubcommandExits2() {
        Cli.Result r = Cli.run("frobnicate");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("gpupool: Unmatched argument", "'frobnicate'", "Usage: gpupool");
    }

    @Test
    void specExceptionIsAUserErrorWithoutStackTrace() {
        Cli.Result r = Cli.run(cmd -> cmd.addSubcommand(new Failing()), "fail", "--with", "spec");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("gpupool: trace.csv:3: field 'duration': must be >= 0" + System.lineSeparator());
    }

    @Test
    void wrappedSpecExceptionIsStillAUserError() {
        Cli.Result r = Cli.run(cmd -> cmd.addSubcommand(new Failing()), "fail", "--with", "wrapped-spec");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).startsWith("gpupool: trace.csv:3: field 'duration': must be >= 0").doesNotContain("\tat ");
    }

    @Test
    void missingFileIsAUserError() {
        Cli.Result r = Cli.run(cmd -> cmd.addSubcommand(new Failing()), "fail", "--with", "no-file");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).startsWith("gpupool: missing.csv: no such file or directory").doesNotContain("\tat ");
    }

    @Test
    void unexpectedExceptionExits1WithMessage() {
        Cli.Result r = Cli.run(cmd -> cmd.addSubcommand(new Failing()), "fail", "--with", "bug");
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).contains("gpupool: unexpected error: java.lang.IllegalStateException: invariant broken");
        if (System.getenv(ErrorHandlers.DEBUG_ENV) == null) assertThat(r.err()).doesNotContain("\tat ");
    }

    @Test
    void specExceptionInAConverterNamesTheOption() {
        Cli.Result r = Cli.run(cmd -> cmd.addSubcommand(new Failing()), "fail", "--gpu", "A99");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("gpupool: invalid value for option '--gpu': --gpu: field 'gpu model': unknown GPU model 'A99'");
    }

    /** A test-only subcommand that fails the way real ones can. */
    @Command(name = "fail")
    static final class Failing implements Callable<Integer> {
        @Option(names = "--with")
        String with = "none";

        @Option(names = "--gpu", converter = GpuConverter.class)
        Object gpu;

        @Override
        public Integer call() {
            switch (with) {
                case "spec" -> throw new SpecException("trace.csv:3", "duration", "must be >= 0");
                case "wrapped-spec" -> throw new RuntimeException(new SpecException("trace.csv:3", "duration", "must be >= 0"));
                case "no-file" -> throw new UncheckedIOException(new NoSuchFileException("missing.csv"));
                case "bug" -> throw new IllegalStateException("invariant broken");
                default -> { return 0; }
            }
        }
    }

    static final class GpuConverter implements CommandLine.ITypeConverter<Object> {
        @Override
        public Object convert(String value) {
            return io.gpupool.model.GpuCatalog.standard().require(value, "--gpu");
        }
    }
}
