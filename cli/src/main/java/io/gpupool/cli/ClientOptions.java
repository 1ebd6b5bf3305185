package io.gpupool.cli;

import picocli.CommandLine.Option;

import java.nio.file.Path;

/** Where the service is and who we are, shared by the client subcommands (a picocli mixin). */
final class ClientOptions {
    @Option(names = "--server", paramLabel = "URL", description = "Service URL, or several replicas' URLs comma-separated (the client follows the active one) (default: $GPUPOOL_SERVER, client.properties, else http://localhost:8080).")
    String server;

    @Option(names = "--token", paramLabel = "T", description = "API token (default: $GPUPOOL_TOKEN, else token= in ~/.config/gpupool/client.properties).")
    String token;

    @Option(names = "--ca", paramLabel = "FILE",
            description = "PEM file of the CA that signed an https:// server's certificate (a private CA; default: $GPUPOOL_CA, else ca= in client.properties, else the system trust store).")
    Path ca;

    ApiClient client() {
        return new ApiClient(server, token, ca);
    }
}
