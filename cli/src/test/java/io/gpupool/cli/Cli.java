package io.gpupool.cli;

import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/** Runs {@code gpupool} in-process, as {@link Main} would, with stdout and stderr captured. */
final class Cli {
    record Result(int exitCode, String out, String err) {}

    private Cli() {}

    /** A user error (exit 2) whose message names the field it is about, as gpupool's errors do: {@code field 'NAME'}. */
    static void assertRefused(Result r, String field) {
        assertThat(r.exitCode()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).contains("field '" + field + "'");
    }

    static Result run(String... args) {
        return run(cmd -> {}, args);
    }

    /** {@code customize} may add test-only subcommands before the streams are set (they propagate to all). */
    static Result run(Consumer<CommandLine> customize, String... args) {
        CommandLine cmd = GpupoolCommand.newCommandLine();
        customize.accept(cmd);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        int code = cmd.execute(args);
        return new Result(code, out.toString(), err.toString());
    }
}
