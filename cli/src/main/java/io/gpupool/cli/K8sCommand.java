package io.gpupool.cli;

import picocli.CommandLine.Command;

/** {@code gpupool k8s}: gpupool inside Kubernetes, as a scheduler extender or as a second scheduler. */
@Command(name = "k8s",
        description = "Run gpupool inside Kubernetes: as kube-scheduler's extender, or as a secondary scheduler (schedulerName: gpupool).",
        subcommands = {K8sExtenderCommand.class, K8sSchedulerCommand.class})
public final class K8sCommand {
}
