package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.model.SpecException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;

/** Load bench of a running server: durable submissions per second and their latency (docs/benchmarks.md). */
@Command(name = "loadgen", description = {"Send submissions to a gpupool server at a fixed rate and report acknowledged/s and latency percentiles.",
        "Needs an admin token: it creates --tenants tenants (load-0, load-1, ...) and one member token each."})
public final class LoadgenCommand extends ClientCommand {
    @Option(names = "--rate", defaultValue = "2000", paramLabel = "PER_SEC", description = "Submissions per second (default: ${DEFAULT-VALUE}).")
    double rate;
    @Option(names = "--duration", defaultValue = "30", paramLabel = "SEC", description = "Seconds of load (default: ${DEFAULT-VALUE}).")
    int duration;
    @Option(names = "--tenants", defaultValue = "4", paramLabel = "N", description = "Tenants to spread the load over (default: ${DEFAULT-VALUE}).")
    int tenants;
    @Option(names = "--warmup", defaultValue = "0", paramLabel = "SEC",
            description = "Seconds of the same load first, not measured: the server's and this client's JIT settle (default: ${DEFAULT-VALUE}).")
    int warmup;
    @Option(names = "--max-in-flight", defaultValue = "256", paramLabel = "N", description = "Most outstanding requests (default: ${DEFAULT-VALUE}).")
    int maxInFlight;

    @Override
    public Integer call() throws InterruptedException {
        if (rate <= 0 || duration <= 0 || tenants <= 0 || maxInFlight <= 0) throw new SpecException("loadgen", null, "--rate, --duration, --tenants and --max-in-flight must be > 0");
        if (warmup < 0) throw new SpecException("loadgen", "warmup", "must be >= 0, got " + warmup);
        ApiClient api = api();
        PrintWriter out = out();
        String run = Long.toString(System.currentTimeMillis(), 36);
        List<String> tokens = new ArrayList<>();
        for (int t = 0; t < tenants; t++) {
            String name = "load-" + run + "-" + t;
            api.post("/api/v1/tenants", Map.of("name", name, "weight", 1), null);
            JsonNode tok = api.post("/api/v1/tenants/" + name + "/tokens", Map.of("label", "loadgen"), null);
            tokens.add(tok.path("token").asText());
        }
        // one pool of keep-alive connections for warm-up and measured run
        ConcurrentLinkedDeque<KeepAliveConnection> connections = new ConcurrentLinkedDeque<>();
        if (warmup > 0) {
            LoadGenerator.Result w = new LoadGenerator(URI.create(api.server()), api.trust(), tokens, rate, (int) Math.round(rate * warmup), maxInFlight, "lg-" + run + "-w").run(connections);
            out.printf("warm-up: %d submissions in %.1f s (not measured)%n", w.sent(), w.seconds());
        }
        int total = (int) Math.round(rate * duration);
        out.printf("loadgen: %d submissions at %.0f/s over %d tenants, max %d in flight, from %s%n", total, rate, tenants, maxInFlight, Instant.now());
        out.flush();
        LoadGenerator.Result r;
        try {
            r = new LoadGenerator(URI.create(api.server()), api.trust(), tokens, rate, total, maxInFlight, "lg-" + run + "-").run(connections);
        } finally {
            connections.forEach(KeepAliveConnection::close);
        }
        out.printf("sent %d, acknowledged %d (%.0f/s) in %.1f s; answers by status %s%n", r.sent(), r.acked(), r.ackedPerSec(), r.seconds(), r.byStatus());
        out.printf("latency ms: p50 %.1f  p95 %.1f  p99 %.1f  max %.1f%n", r.p50Us() / 1000.0, r.p95Us() / 1000.0, r.p99Us() / 1000.0, r.maxUs() / 1000.0);
        out.println("per-second p99 ms: " + Arrays.stream(r.perSecondP99Us()).mapToObj(us -> Long.toString(Math.round(us / 1000.0)))
                .collect(Collectors.joining(" ")));
        return r.acked() == r.sent() ? 0 : 1;
    }
}
