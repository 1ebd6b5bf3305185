package io.gpupool.cli;

import picocli.CommandLine.Option;

/** {@code --output table|json} of the commands that print a table for people or JSON for scripts (a picocli mixin). */
final class TableOrJson {
    enum Format { table, json }

    @Option(names = "--output", paramLabel = "FORMAT", defaultValue = "table",
            description = "Output format: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    Format format;

    boolean json() {
        return format == Format.json;
    }
}
