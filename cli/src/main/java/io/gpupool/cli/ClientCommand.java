package io.gpupool.cli;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/**
 * A command that talks to a gpupool server: the server, token and CA options ({@link ClientOptions}) and where
 * it writes. A subclass adds its own options and {@link #call()}; an error answer of the server fails it (exit 2).
 */
abstract class ClientCommand implements Callable<Integer> {
    @Spec CommandSpec spec;
    @Mixin ClientOptions client;

    /** A client of the server the options name. */
    ApiClient api() {
        return client.client();
    }

    /** Where results go (stdout, or the tests' capture). */
    PrintWriter out() {
        return spec.commandLine().getOut();
    }
}
