package io.gpupool.cli;

import io.gpupool.model.BuildInfo;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.ScopeType;

import java.util.List;

/**
 * The top command, {@code gpupool}. It has no behaviour of its own: without a subcommand picocli reports
 * "Missing required subcommand" (exit 2) and prints the usage.
 *
 * <p><b>Adding a subcommand</b>: write one class annotated {@code @Command(name = "...")} that implements
 * {@code Callable<Integer>} (write output to {@code spec.commandLine().getOut()} so tests can capture it),
 * and add it to the {@link #SUBCOMMANDS} list below. It inherits {@code --help}/{@code --version} and the
 * error handling of {@link #newCommandLine()}: throw {@link io.gpupool.model.SpecException} for bad input.
 */
@Command(name = "gpupool",
        mixinStandardHelpOptions = true,
        // INHERIT: every subcommand gets --help and --version without repeating the mixin.
        scope = ScopeType.INHERIT,
        versionProvider = GpupoolCommand.Version.class,
        description = {
                "Shared GPU pool scheduler: queue policies, placement, trace-driven simulation.",
                ""},
        commandListHeading = "%nCommands:%n")
public final class GpupoolCommand {
    /** The subcommands, in the order --help lists them: one line per subcommand. */
    static final List<Class<?>> SUBCOMMANDS = List.of(
            CatalogCommand.class,
            SimulateCommand.class,
            OptimizeCommand.class,
            ServerCommand.class,
            SubmitCommand.class,
            StatusCommand.class,
            CancelCommand.class,
            JobActions.Hold.class,
            JobActions.Release.class,
            JobActions.Requeue.class,
            JobActions.Update.class,
            ReservationCommand.class,
            TokenCommand.class,
            QueueCommand.class,
            NodesCommand.class,
            UsageCommand.class,
            HistoryCommand.class,
            TopCommand.class,
            LoadgenCommand.class,
            K8sCommand.class,
            GpusCommand.class,
            AgentCommand.class,
            LogsCommand.class,
            AdviseCommand.class,
            PredictCommand.class,
            CommandLine.HelpCommand.class);

    /**
     * The command line with gpupool's conventions: case-insensitive enum values ({@code --output JSON}),
     * and {@link ErrorHandlers} for parse errors (exit 2), bad input (exit 2) and unexpected failures (exit 1).
     * {@link Main} and the tests both start here.
     */
    public static CommandLine newCommandLine() {
        return newCommandLine(SUBCOMMANDS);
    }

    /**
     * The command line for these arguments: when they start with a subcommand's name, only that subcommand is built;
     * else (no arguments, an option such as --help, {@code help}, a mistyped name) every one is. picocli reads each
     * command's options by reflection as it builds it, which for all of them was about half a second of every run's
     * start ({@code simulate}, {@code status}, ...). A subcommand's parsing, help and errors are the same either way.
     */
    public static CommandLine forArgs(String... args) {
        if (args.length > 0) {
            for (Class<?> c : SUBCOMMANDS) {
                if (c != CommandLine.HelpCommand.class && c.getAnnotation(Command.class).name().equals(args[0])) {
                    return newCommandLine(List.of(c));
                }
            }
        }
        return newCommandLine();
    }

    private static CommandLine newCommandLine(List<Class<?>> subcommands) {
        ErrorHandlers errors = new ErrorHandlers();
        CommandLine cmd = new CommandLine(new GpupoolCommand());
        for (Class<?> c : subcommands) cmd.addSubcommand(c);   // before the settings below, which apply to subcommands too
        cmd.setCaseInsensitiveEnumValuesAllowed(true)
                .setParameterExceptionHandler(errors)
                .setExecutionExceptionHandler(errors);
        // Set here, not in @Command: with scope INHERIT an annotated footer would repeat in every subcommand.
        cmd.getCommandSpec().usageMessage().footer("", "Run 'gpupool COMMAND --help' for the options of a command.");
        return cmd;
    }

    /** The version of this build, e.g. {@code 0.1.0-SNAPSHOT}; "unknown" when run from unfiltered sources. */
    public static String version() {
        return BuildInfo.current().version();
    }

    /** {@code gpupool --version}. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {
                    "gpupool " + BuildInfo.current().describe(),
                    "Java " + Runtime.version() + " (" + System.getProperty("java.vendor") + ")"};
        }
    }
}
