package io.gpupool.cli;

import picocli.CommandLine.Command;

/** {@code gpupool predict}: the run-time predictors. Only a group: its subcommands do the work. */
@Command(name = "predict",
        header = "Run-time prediction: evaluate the predictors on a trace.",
        description = "Run-time predictors learn how long jobs run from finished ones (history medians, gradient-boosted trees); "
                + "qssf and EASY backfill use them when a job gives no estimate.%n",
        subcommands = {PredictEvaluateCommand.class})
public final class PredictCommand {
}
