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

    /**
     * {@code customize} may add test-only subcommands before the streams are set (they propagate to all). The command
     * line is built as {@link Main} builds it: only the subcommand the arguments name, when they name one.
     */
    static Result run(Consumer<CommandLine> customize, String... args) {
        CommandLine cmd = GpupoolCommand.forArgs(args);
        customize.accept(cmd);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        int code = cmd.execute(args);
        return new Result(code, out.toString(), err.toString());
    }

    /** Runs {@code command} until its result passes {@code done} or 10 s have gone by; returns the last result. */
    static Result until(java.util.function.Supplier<Result> command, java.util.function.Predicate<Result> done) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        Result r = command.get();
        while (!done.test(r) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            r = command.get();
        }
        return r;
    }

    /** {@code a}, then {@code b}, then {@code rest}: a command line from its parts. */
    static String[] cat(String[] a, String[] b, String... rest) {
        String[] out = new String[a.length + b.length + rest.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        System.arraycopy(rest, 0, out, a.length + b.length, rest.length);
        return out;
    }
}
