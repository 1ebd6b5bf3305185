package io.gpupool.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code -q/--quiet} and the progress notes it silences, {@code gpupool: ...} on stderr (a picocli mixin). */
final class Notes {
    @Spec(Spec.Target.MIXEE) CommandSpec command;

    @Option(names = {"-q", "--quiet"}, description = "No progress bar or notes on stderr; errors are still shown.")
    boolean quiet;

    /** A progress note, unless quiet. */
    void say(String message) {
        if (!quiet) {
            command.commandLine().getErr().println(ErrorHandlers.PREFIX + message);
            command.commandLine().getErr().flush();
        }
    }
}
