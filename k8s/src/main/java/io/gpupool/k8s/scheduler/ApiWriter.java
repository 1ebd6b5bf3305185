package io.gpupool.k8s.scheduler;

import io.fabric8.kubernetes.api.model.Binding;
import io.fabric8.kubernetes.api.model.BindingBuilder;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.gpupool.engine.status.Code;
import io.gpupool.k8s.ClusterModel.Decision;
import io.gpupool.k8s.ClusterModel.Eviction;
import io.gpupool.k8s.ClusterModel.Report;
import io.gpupool.k8s.KubeNames;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Carries the engine's decisions to the API server, as kube-scheduler and HAMi do: the decision
 * annotations on the pod (an update at the resourceVersion the decision was made on, so a pod changed or
 * decided by another replica meanwhile is not overwritten), then the Binding; events and the
 * PodScheduled condition for pods that cannot be scheduled.
 */
public final class ApiWriter {
    static final String COMPONENT = "gpupool";
    private final KubernetesClient client;

    public ApiWriter(KubernetesClient client) {
        this.client = client;
    }

    /** Writes the decision and binds the pod; throws {@link KubernetesClientException} when the API refuses. */
    public void bind(Decision d) {
        Pod pod = d.pod();
        boolean annotated = d.devices() != null && d.devices().equals(annotations(pod).get(KubeNames.DEVICES_ALLOCATED))
                && d.node().equals(annotations(pod).get(KubeNames.ASSIGNED_NODE));
        if (!annotated) {
            String now = Long.toString(d.atMs() / 1000);
            Map<String, String> add = new HashMap<>();
            add.put(KubeNames.ASSIGNED_NODE, d.node());
            add.put(KubeNames.ASSIGNED_TIME, now);
            add.put(KubeNames.BIND_TIME, now);
            add.put(KubeNames.BIND_PHASE, KubeNames.BIND_PHASE_ALLOCATING);
            add.put(KubeNames.DEVICES_TO_ALLOCATE, d.devices());
            add.put(KubeNames.DEVICES_ALLOCATED, d.devices());
            add.put(KubeNames.TENANT, d.tenant());
            add.put(KubeNames.JOB, d.jobId());
            Pod current = pod;
            for (int attempt = 1; ; attempt++) {
                try {
                    client.pods().inNamespace(d.namespace()).resource(new PodBuilder(current).editMetadata().addToAnnotations(add).endMetadata().build()).update();
                    break;
                } catch (KubernetesClientException e) {
                    // a conflict from a change that does not touch the decision (a status update) is retried on
                    // the fresh pod; a pod that was decided or bound meanwhile, or is another pod now, is not ours
                    if (e.getCode() != 409 || attempt == 3) throw e;
                    current = client.pods().inNamespace(d.namespace()).withName(d.name()).get();
                    if (current == null || !d.uid().equals(current.getMetadata().getUid()) || current.getSpec().getNodeName() != null
                            || annotations(current).containsKey(KubeNames.ASSIGNED_NODE)) throw e;
                }
            }
        }
        Binding b = new BindingBuilder().withNewMetadata().withName(d.name()).withNamespace(d.namespace()).withUid(d.uid()).endMetadata()
                .withNewTarget().withApiVersion("v1").withKind("Node").withName(d.node()).endTarget().build();
        try {
            client.bindings().inNamespace(d.namespace()).resource(b).create();
        } catch (KubernetesClientException e) {
            // a binding already made (by a replica that stopped before it saw the answer) is this binding
            if (e.getCode() != 409) throw e;
            Pod now = client.pods().inNamespace(d.namespace()).withName(d.name()).get();
            if (now == null || !d.node().equals(now.getSpec().getNodeName())) throw e;
        }
    }

    /** After a failed binding: takes the decision off the pod again, so no one reads GPUs it does not hold. */
    public void undo(Decision d) {
        try {
            client.pods().inNamespace(d.namespace()).withName(d.name()).edit(p -> {
                if (p.getSpec() != null && p.getSpec().getNodeName() != null && !p.getSpec().getNodeName().isEmpty()) return p;
                Map<String, String> a = p.getMetadata().getAnnotations();
                if (a != null) {
                    for (String k : List.of(KubeNames.ASSIGNED_NODE, KubeNames.ASSIGNED_TIME, KubeNames.BIND_TIME, KubeNames.BIND_PHASE,
                            KubeNames.DEVICES_TO_ALLOCATE, KubeNames.DEVICES_ALLOCATED, KubeNames.TENANT, KubeNames.JOB)) a.remove(k);
                }
                return p;
            });
        } catch (KubernetesClientException e) {
            // the pod is gone or changed again: either way it no longer carries this decision as its own
        }
    }

    /** kube-scheduler's "Scheduled" event. */
    public void scheduled(Decision d) {
        event(d.namespace(), d.name(), d.uid(), "Normal", "Scheduled",
                "Successfully assigned " + d.namespace() + "/" + d.name() + " to " + d.node() + " (gpupool: " + d.devices() + ")");
    }

    /** A FailedScheduling event and PodScheduled=False with the reason, as kube-scheduler reports it. */
    public void unschedulable(Report r) {
        event(r.namespace(), r.name(), r.uid(), "Warning", "FailedScheduling", r.message());
        try {
            client.pods().inNamespace(r.namespace()).withName(r.name()).editStatus(p -> {
                List<PodCondition> conditions = new ArrayList<>();
                if (p.getStatus() != null && p.getStatus().getConditions() != null) {
                    p.getStatus().getConditions().stream().filter(c -> !"PodScheduled".equals(c.getType())).forEach(conditions::add);
                }
                conditions.add(new PodConditionBuilder().withType("PodScheduled").withStatus("False").withReason(conditionReason(r))
                        .withMessage(r.message()).withLastTransitionTime(Instant.now().toString()).build());
                return new PodBuilder(p).editOrNewStatus().withConditions(conditions).endStatus().build();
            });
        } catch (KubernetesClientException e) {
            // the pod went away meanwhile: nothing to explain any more
        }
    }

    /** kube-scheduler's PodScheduled reasons: SchedulerError for an inconsistency, Unschedulable for every refusal. */
    static String conditionReason(Report r) {
        return r.status().code() == Code.ERROR ? "SchedulerError" : "Unschedulable";
    }

    public void evict(Eviction e) {
        event(e.namespace(), e.name(), e.uid(), "Normal", "Preempted", "gpupool: " + e.reason());
        try {
            if (!client.pods().inNamespace(e.namespace()).withName(e.name()).evict()) {
                client.pods().inNamespace(e.namespace()).withName(e.name()).delete();
            }
        } catch (KubernetesClientException ex) {
            client.pods().inNamespace(e.namespace()).withName(e.name()).delete();
        }
    }

    private void event(String ns, String pod, String uid, String type, String reason, String message) {
        String now = Instant.now().toString();
        try {
            client.v1().events().inNamespace(ns).resource(new EventBuilder()
                    .withNewMetadata().withName(pod + "." + UUID.randomUUID().toString().substring(0, 8)).withNamespace(ns).endMetadata()
                    .withNewInvolvedObject().withKind("Pod").withApiVersion("v1").withNamespace(ns).withName(pod).withUid(uid).endInvolvedObject()
                    .withType(type).withReason(reason).withMessage(message).withCount(1).withFirstTimestamp(now).withLastTimestamp(now)
                    .withNewSource().withComponent(COMPONENT).endSource().withReportingComponent(COMPONENT).build()).create();
        } catch (KubernetesClientException e) {
            // events are best effort, as in kube-scheduler
        }
    }

    private static Map<String, String> annotations(Pod p) {
        return p.getMetadata().getAnnotations() == null ? Map.of() : p.getMetadata().getAnnotations();
    }
}
