package io.gpupool.cli;

/** Entry point of the distribution jar ({@code cli/target/gpupool.jar}, started by {@code ./gpupool}). */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        System.exit(GpupoolCommand.forArgs(args).execute(args));
    }
}
