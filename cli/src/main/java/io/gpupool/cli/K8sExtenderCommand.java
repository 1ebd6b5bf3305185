package io.gpupool.cli;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpupool.k8s.K8sConfig;
import io.gpupool.k8s.extender.Extender;
import io.gpupool.k8s.extender.ExtenderServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code gpupool k8s extender}: kube-scheduler's extender (filter, prioritize, bind, preempt) on the engine. */
@Command(name = "extender",
        description = {"Serve kube-scheduler's extender protocol (extender/v1): POST /filter, /prioritize, /bind, /preempt.",
                "Reaches the API server through in-cluster config, KUBECONFIG or ~/.kube/config."})
public final class K8sExtenderCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--port", defaultValue = "8888", paramLabel = "N", description = "Port to listen on (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--bind-address", defaultValue = "0.0.0.0", paramLabel = "ADDR", description = "Address to listen on (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--config", paramLabel = "FILE", description = "gpupool's Kubernetes settings (YAML: policy, placement, tenants); defaults without.")
    Path config;

    @Option(names = "--node-cache-capable", defaultValue = "true", arity = "1", paramLabel = "BOOL",
            description = "As in KubeSchedulerConfiguration: true = keep nodes from the API server, kube-scheduler sends names; "
                    + "false = use the Node objects in each request (default: ${DEFAULT-VALUE}).")
    boolean nodeCacheCapable;

    @Override
    public Integer call() throws Exception {
        K8sConfig cfg = config == null ? K8sConfig.defaults() : K8sConfig.load(config);
        try (KubernetesClient client = K8sCommand.connect();
             Extender extender = new Extender(client, cfg, nodeCacheCapable)) {
            extender.start();
            try (ExtenderServer server = new ExtenderServer(extender, host, port)) {
                server.start();
                spec.commandLine().getOut().println("gpupool extender listening on " + host + ":" + server.port()
                        + " (nodeCacheCapable=" + nodeCacheCapable + ", policy " + cfg.policy() + ", placement " + cfg.placement().label() + ")");
                spec.commandLine().getOut().flush();
                CountDownLatch stop = new CountDownLatch(1);
                Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
                stop.await();
            }
        }
        return 0;
    }
}
