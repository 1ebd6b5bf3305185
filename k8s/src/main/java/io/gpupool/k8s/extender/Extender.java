package io.gpupool.k8s.extender;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.gpupool.k8s.ClusterModel;
import io.gpupool.k8s.K8sConfig;
import io.gpupool.k8s.Pods;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderArgs;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderBindingArgs;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderBindingResult;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderFilterResult;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderPreemptionArgs;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderPreemptionResult;
import io.gpupool.k8s.extender.ExtenderTypes.HostPriority;
import io.gpupool.k8s.extender.ExtenderTypes.MetaPod;
import io.gpupool.k8s.extender.ExtenderTypes.MetaVictims;
import io.gpupool.k8s.scheduler.ApiWriter;
import io.gpupool.model.GpuCatalog;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * kube-scheduler's extender verbs on the engine: filter = the engine's filters and GPU policy on each node
 * (a dry run), prioritize = its scorers, bind = placement on the chosen node plus the HAMi decision
 * annotations and the Binding, preempt = whether evicting the proposed victims makes the GPUs fit.
 * kube-scheduler orders the pods; gpupool decides which GPUs and how nodes rank for GPU work.
 *
 * <p>Node state: with nodeCacheCapable the extender keeps nodes from the API server (an informer) and
 * kube-scheduler sends node names; without, kube-scheduler sends the Node objects and those are used.
 * GPU use always comes from the pods' decision annotations (a pod informer), so a restart loses nothing.
 */
public final class Extender implements AutoCloseable {
    private final KubernetesClient client;
    private final ClusterModel model;
    private final ApiWriter api;
    private final boolean nodeCacheCapable;
    private final List<SharedIndexInformer<?>> informers = new ArrayList<>();

    public Extender(KubernetesClient client, K8sConfig config, boolean nodeCacheCapable) {
        this.client = client;
        this.model = new ClusterModel(config, GpuCatalog.standard(), false);
        this.api = new ApiWriter(client);
        this.nodeCacheCapable = nodeCacheCapable;
    }

    /** Starts watching pods (and nodes with nodeCacheCapable); returns once the first lists are in. */
    public void start() {
        informers.add(client.pods().inAnyNamespace().inform(handler(this::setPod, p -> withModel(m -> m.removePod(Pods.key(p))))));
        if (nodeCacheCapable) {
            informers.add(client.nodes().inform(handler(n -> withModel(m -> m.setNode(n)), n -> withModel(m -> m.removeNode(n.getMetadata().getName())))));
        }
    }

    @Override
    public void close() {
        informers.forEach(SharedIndexInformer::close);
    }

    public ExtenderFilterResult filter(ExtenderArgs args) {
        if (args.pod() == null) return new ExtenderFilterResult(null, null, Map.of(), Map.of(), "the request has no Pod");
        List<String> names = candidateNames(args);
        ClusterModel.FilterOutcome f;
        synchronized (model) {
            f = model.filter(args.pod(), names);
        }
        if (args.nodes() != null) {
            List<Node> kept = args.nodes().getItems().stream().filter(n -> f.passed().contains(n.getMetadata().getName())).toList();
            NodeList list = new NodeList();
            list.setItems(kept);
            list.setMetadata(args.nodes().getMetadata());
            return new ExtenderFilterResult(list, null, f.failed(), f.unresolvable(), "");
        }
        return new ExtenderFilterResult(null, f.passed(), f.failed(), f.unresolvable(), "");
    }

    public List<HostPriority> prioritize(ExtenderArgs args) {
        if (args.pod() == null) return List.of();
        List<String> names = candidateNames(args);
        Map<String, Long> scores;
        synchronized (model) {
            scores = model.prioritize(args.pod(), names, ExtenderTypes.MAX_EXTENDER_PRIORITY);
        }
        return names.stream().map(n -> new HostPriority(n, scores.getOrDefault(n, 0L))).toList();
    }

    public ExtenderBindingResult bind(ExtenderBindingArgs args) {
        if (args.podName() == null || args.podNamespace() == null || args.node() == null) {
            return new ExtenderBindingResult("PodName, PodNamespace and Node are required");
        }
        Pod pod;
        try {
            pod = client.pods().inNamespace(args.podNamespace()).withName(args.podName()).get();
        } catch (KubernetesClientException e) {
            return new ExtenderBindingResult("reading pod " + args.podNamespace() + "/" + args.podName() + ": " + e.getMessage());
        }
        if (pod == null) return new ExtenderBindingResult("pod " + args.podNamespace() + "/" + args.podName() + " not found");
        if (args.podUID() != null && !args.podUID().isEmpty() && !args.podUID().equals(pod.getMetadata().getUid())) {
            return new ExtenderBindingResult("pod " + args.podNamespace() + "/" + args.podName() + " has UID " + pod.getMetadata().getUid() + ", not " + args.podUID());
        }
        ClusterModel.BindOutcome outcome;
        synchronized (model) {
            outcome = model.bind(pod, args.node());
        }
        if (outcome.error() != null) return new ExtenderBindingResult(outcome.error());
        try {
            api.bind(outcome.decision());
        } catch (KubernetesClientException e) {
            api.undo(outcome.decision());
            synchronized (model) {
                model.bindFailed(outcome.decision());
            }
            return new ExtenderBindingResult("binding " + args.podNamespace() + "/" + args.podName() + " to " + args.node() + ": " + e.getMessage());
        }
        api.scheduled(outcome.decision());
        return new ExtenderBindingResult("");
    }

    public ExtenderPreemptionResult preempt(ExtenderPreemptionArgs args) {
        Map<String, List<String>> byNode = new LinkedHashMap<>();
        Map<String, Long> pdb = new LinkedHashMap<>();
        if (args.nodeNameToMetaVictims() != null) {
            args.nodeNameToMetaVictims().forEach((node, v) -> {
                byNode.put(node, v == null || v.pods() == null ? List.of() : v.pods().stream().map(MetaPod::uid).toList());
                pdb.put(node, v == null ? 0 : v.numPDBViolations());
            });
        } else if (args.nodeNameToVictims() != null) {
            args.nodeNameToVictims().forEach((node, v) -> {
                byNode.put(node, v == null || v.pods() == null ? List.of() : v.pods().stream().map(p -> p.getMetadata().getUid()).toList());
                pdb.put(node, v == null ? 0 : v.numPDBViolations());
            });
        }
        if (args.pod() == null) return new ExtenderPreemptionResult(Map.of());
        Map<String, List<String>> kept;
        synchronized (model) {
            kept = model.preempt(args.pod(), byNode);
        }
        Map<String, MetaVictims> out = new LinkedHashMap<>();
        kept.forEach((node, uids) -> out.put(node, new MetaVictims(uids.stream().map(MetaPod::new).toList(), pdb.getOrDefault(node, 0L))));
        return new ExtenderPreemptionResult(out);
    }

    /** Reads the model under its lock (tests, metrics). */
    public <T> T inspect(java.util.function.Function<ClusterModel, T> read) {
        synchronized (model) {
            return read.apply(model);
        }
    }

    private List<String> candidateNames(ExtenderArgs args) {
        if (args.nodes() != null) {
            List<Node> items = args.nodes().getItems() == null ? List.of() : args.nodes().getItems();
            synchronized (model) {
                items.forEach(model::setNode);
            }
            return items.stream().map(n -> n.getMetadata().getName()).toList();
        }
        return args.nodeNames() == null ? List.of() : args.nodeNames();
    }

    private void setPod(Pod p) {
        withModel(m -> m.setPod(p));
    }

    private void withModel(Consumer<ClusterModel> change) {
        synchronized (model) {
            change.accept(model);
        }
    }

    private static <T> ResourceEventHandler<T> handler(Consumer<T> upsert, Consumer<T> delete) {
        return new ResourceEventHandler<>() {
            @Override public void onAdd(T obj) { upsert.accept(obj); }
            @Override public void onUpdate(T oldObj, T newObj) { upsert.accept(newObj); }
            @Override public void onDelete(T obj, boolean unknownFinalState) { delete.accept(obj); }
        };
    }
}
