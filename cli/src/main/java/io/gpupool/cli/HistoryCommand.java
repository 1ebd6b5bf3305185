package io.gpupool.cli;

import picocli.CommandLine.Command;

/** {@code gpupool history}: the pool's finished jobs. Only a group: its subcommands do the work. */
@Command(name = "history",
        header = "The pool's finished jobs as a trace, to replay under other policies.",
        description = "A gpupool server's finished jobs over a window as a gpupool trace CSV, with what really happened to each in "
                + "recorded_* columns; gpupool simulate --history compares policies on it.%n",
        subcommands = {HistoryExportCommand.class})
public final class HistoryCommand {
}
