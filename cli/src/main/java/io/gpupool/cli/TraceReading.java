package io.gpupool.cli;

import io.gpupool.sim.trace.TraceContext;
import io.gpupool.sim.trace.TraceFile;
import io.gpupool.sim.trace.TraceFormats;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/** How a trace file is read, for {@code simulate} and {@code predict evaluate} (a picocli mixin). */
final class TraceReading {
    @Option(names = "--trace-format", defaultValue = "gpupool", paramLabel = "FORMAT",
            description = "gpupool (default), philly (Microsoft Philly job table) or openb (Alibaba openb pod list; simulate: with --nodes).")
    String format;

    @Option(names = "--skip-bad-rows", description = "Skip malformed trace rows (and say how many) instead of stopping at the first.")
    boolean skipBadRows;

    /** Indexes {@code trace} in the chosen format, checking every row. */
    TraceFile open(Path trace, TraceContext context) {
        return TraceFile.open(trace, TraceFormats.get(format), context, skipBadRows);
    }
}
