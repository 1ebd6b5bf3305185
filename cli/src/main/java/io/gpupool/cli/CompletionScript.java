package io.gpupool.cli;

import picocli.AutoComplete;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes the bash completion script of the whole command tree ({@link GpupoolCommand#newCommandLine()}) to the file
 * named: the release bundle's {@code completion/gpupool.bash} (dist). picocli's own generator builds the command from
 * its annotations, which no longer list the subcommands ({@link GpupoolCommand#SUBCOMMANDS}).
 */
public final class CompletionScript {
    private CompletionScript() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 1) throw new IllegalArgumentException("usage: CompletionScript FILE");
        Path out = Path.of(args[0]);
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, AutoComplete.bash("gpupool", GpupoolCommand.newCommandLine()));
    }
}
