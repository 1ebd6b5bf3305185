package io.gpupool.cli;

import io.gpupool.model.SpecException;
import picocli.CommandLine;
import picocli.CommandLine.ExitCode;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

import java.io.PrintWriter;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/**
 * How every subcommand fails. User errors never show a stack trace:
 * <ul>
 *   <li>a command line picocli cannot parse: {@code gpupool: <message>}, suggestions, the usage; exit 2;</li>
 *   <li>a {@link SpecException} anywhere (also wrapped, also from a type converter): {@code gpupool: <message>};
 *       exit 2;</li>
 *   <li>a file that does not exist or may not be read/written ({@link NoSuchFileException},
 *       {@link AccessDeniedException}, {@link NotDirectoryException}, also wrapped): {@code gpupool: <message>};
 *       exit 2;</li>
 *   <li>anything else is a bug or an environment failure: {@code gpupool: unexpected error: <exception>}; exit 1.
 *       With the environment variable {@value #DEBUG_ENV} set (non-empty) the stack trace follows.</li>
 * </ul>
 * Everything goes to the command's {@code getErr()} writer (stderr, or the tests' capture).
 */
final class ErrorHandlers implements IParameterExceptionHandler, IExecutionExceptionHandler {
    static final String DEBUG_ENV = "GPUPOOL_DEBUG";
    static final String PREFIX = "gpupool: ";

    @Override
    public int handleParseException(ParameterException ex, String[] args) {
        CommandLine cmd = ex.getCommandLine();
        PrintWriter err = cmd.getErr();
        SpecException spec = find(ex, SpecException.class);
        String message = spec != null && ex.getArgSpec() != null
                ? "invalid value for " + describe(ex.getArgSpec()) + ": " + spec.getMessage()
                : ex.getMessage();
        err.println(cmd.getColorScheme().errorText(PREFIX + message));
        UnmatchedArgumentException.printSuggestions(ex, err);
        err.println();
        cmd.usage(err, cmd.getColorScheme());
        err.flush();
        return cmd.getExitCodeExceptionMapper() != null
                ? cmd.getExitCodeExceptionMapper().getExitCode(ex)
                : cmd.getCommandSpec().exitCodeOnInvalidInput();
    }

    @Override
    public int handleExecutionException(Exception ex, CommandLine cmd, ParseResult parseResult) {
        PrintWriter err = cmd.getErr();
        try {
            SpecException spec = find(ex, SpecException.class);
            if (spec != null) {
                err.println(cmd.getColorScheme().errorText(PREFIX + spec.getMessage()));
                return ExitCode.USAGE;
            }
            FileSystemException file = find(ex, FileSystemException.class);
            if (file instanceof NoSuchFileException || file instanceof AccessDeniedException
                    || file instanceof NotDirectoryException) {
                err.println(cmd.getColorScheme().errorText(PREFIX + describe(file)));
                return ExitCode.USAGE;
            }
            err.println(cmd.getColorScheme().errorText(PREFIX + "unexpected error: " + ex));
            String debug = System.getenv(DEBUG_ENV);
            if (debug != null && !debug.isEmpty()) {
                ex.printStackTrace(err);
            } else {
                err.println("(set " + DEBUG_ENV + "=1 to see the stack trace)");
            }
            return ExitCode.SOFTWARE;
        } finally {
            err.flush();
        }
    }

    private static String describe(ArgSpec arg) {
        if (arg instanceof OptionSpec o) return "option '" + o.longestName() + "'";
        if (arg instanceof PositionalParamSpec p) return "parameter " + p.paramLabel();
        return arg.paramLabel();
    }

    private static String describe(FileSystemException e) {
        String what = e.getFile() + (e.getOtherFile() != null ? " -> " + e.getOtherFile() : "");
        String reason = switch (e) {
            case NoSuchFileException _ -> "no such file or directory";
            case AccessDeniedException _ -> "permission denied";
            case NotDirectoryException _ -> "not a directory";
            default -> e.getReason() != null ? e.getReason() : e.getClass().getSimpleName();
        };
        return what + ": " + reason;
    }

    /** The first exception of type {@code type} in the cause chain of {@code t} (including {@code t}), or null. */
    private static <T extends Throwable> T find(Throwable t, Class<T> type) {
        for (int depth = 0; t != null && depth < 32; t = t.getCause(), depth++) {
            if (type.isInstance(t)) return type.cast(t);
        }
        return null;
    }
}
