package io.gpupool.cli;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.gpupool.model.SpecException;
import picocli.CommandLine.Command;

/** {@code gpupool k8s}: gpupool inside Kubernetes, as a scheduler extender or as a second scheduler. */
@Command(name = "k8s",
        description = "Run gpupool inside Kubernetes: as kube-scheduler's extender, or as a secondary scheduler (schedulerName: gpupool).",
        subcommands = {K8sExtenderCommand.class, K8sSchedulerCommand.class})
public final class K8sCommand {

    /** A client for the API server (in-cluster, KUBECONFIG or ~/.kube/config), checked to answer before anything starts. */
    static KubernetesClient connect() {
        KubernetesClient client = new KubernetesClientBuilder().build();
        try {
            client.getKubernetesVersion();
            return client;
        } catch (KubernetesClientException e) {
            String url = client.getConfiguration().getMasterUrl();
            client.close();
            throw new SpecException("kubernetes", "api server", "cannot reach the API server at " + url + " ("
                    + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()) + "); run in the cluster or set KUBECONFIG");
        }
    }
}
