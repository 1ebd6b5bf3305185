package io.gpupool.cli;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpupool.k8s.K8sConfig;
import io.gpupool.k8s.scheduler.SecondaryScheduler;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/** {@code gpupool k8s scheduler}: the secondary scheduler for pods with {@code schedulerName: gpupool}. */
@Command(name = "scheduler",
        description = {"Schedule pods with spec.schedulerName gpupool (or --scheduler-name) through the engine; one active replica via a Lease.",
                "Reaches the API server through in-cluster config, KUBECONFIG or ~/.kube/config."})
public final class K8sSchedulerCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE", description = "gpupool's Kubernetes settings (YAML: schedulerName, policy, placement, tenants).")
    Path config;

    @Option(names = "--scheduler-name", paramLabel = "NAME", description = "Pods' spec.schedulerName to serve (default: the config's, else gpupool).")
    String schedulerName;

    @Option(names = "--policy", paramLabel = "NAME", description = "Queue policy, overriding the config's (fcfs, fcfs-backfill, priority, fair-share, qssf, las).")
    String policy;

    @Option(names = "--leader-elect", defaultValue = "true", arity = "1", paramLabel = "BOOL",
            description = "Campaign for the Lease; false only with a single replica (default: ${DEFAULT-VALUE}).")
    boolean leaderElect;

    @Option(names = "--lease-namespace", paramLabel = "NS", description = "Namespace of the Lease (default: $POD_NAMESPACE, else gpupool-system).")
    String leaseNamespace;

    @Option(names = "--identity", paramLabel = "NAME", description = "This replica's name in the Lease (default: $POD_NAME, else the host name).")
    String identity;

    @Override
    public Integer call() throws Exception {
        K8sConfig cfg = config == null ? K8sConfig.defaults() : K8sConfig.load(config);
        if (schedulerName != null) cfg = cfg.withSchedulerName(schedulerName);
        if (policy != null) cfg = cfg.withPolicy(policy);
        String ns = leaseNamespace != null ? leaseNamespace : envOr("POD_NAMESPACE", "gpupool-system");
        String id = identity != null ? identity : envOr("POD_NAME", InetAddress.getLocalHost().getHostName());
        var opts = SecondaryScheduler.Options.defaults(id, ns)
                .withLeaderElection(leaderElect, Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(2));
        try (KubernetesClient client = K8sCommand.connect();
             SecondaryScheduler scheduler = new SecondaryScheduler(client, cfg, opts)) {
            scheduler.start();
            spec.commandLine().getOut().println("gpupool scheduler " + id + " serving schedulerName " + cfg.schedulerName()
                    + " (policy " + cfg.policy() + ", placement " + cfg.placement().label() + (leaderElect ? ", lease " + ns + "/gpupool-scheduler" : "") + ")");
            spec.commandLine().getOut().flush();
            CompletableFuture<Void> stop = new CompletableFuture<>();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> stop.complete(null)));
            CompletableFuture.anyOf(stop, scheduler.ended()).join();
            if (scheduler.ended().isDone() && !stop.isDone()) {
                spec.commandLine().getErr().println("gpupool: lost the lease; exiting so that a fresh replica campaigns");
                return 1;
            }
        }
        return 0;
    }

    private static String envOr(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v;
    }
}
