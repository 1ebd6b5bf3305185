package io.gpupool.k8s.scheduler;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.gpupool.k8s.ClusterModel;
import io.gpupool.k8s.ClusterModel.Decision;
import io.gpupool.k8s.K8sConfig;
import io.gpupool.k8s.Pods;
import io.gpupool.model.GpuCatalog;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code gpupool k8s scheduler}: a second scheduler next to kube-scheduler for pods with
 * {@code spec.schedulerName: gpupool}. Informers feed nodes and pods into a {@link ClusterModel}; one loop
 * thread applies them and runs engine rounds (the engine orders and places); decisions are written and
 * bound by worker threads, so the loop never waits for the API server. A refused binding comes back to the
 * loop, which gives the GPUs back and queues the pod again.
 *
 * <p>Only the holder of a coordination.k8s.io Lease schedules (fabric8's LeaderElector, as kube-scheduler's
 * leader election); a new leader builds its state from the pods' decision annotations before it places
 * anything.
 */
public final class SecondaryScheduler implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(SecondaryScheduler.class.getName());

    /**
     * @param identity        this replica's name in the Lease
     * @param leaseNamespace  where the Lease lives
     * @param leaderElect     false: schedule at once (one replica only)
     * @param maxInFlight     bindings sent to the API server at once
     */
    public record Options(String identity, String leaseNamespace, String leaseName, boolean leaderElect,
                          Duration leaseDuration, Duration renewDeadline, Duration retryPeriod, int maxInFlight) {
        public static Options defaults(String identity, String namespace) {
            return new Options(identity, namespace, "gpupool-scheduler", true, Duration.ofSeconds(15), Duration.ofSeconds(10),
                    Duration.ofSeconds(2), 64);
        }

        public Options withLeaderElection(boolean on, Duration lease, Duration renew, Duration retry) {
            return new Options(identity, leaseNamespace, leaseName, on, lease, renew, retry, maxInFlight);
        }
    }

    private sealed interface Event permits NodeEvent, PodEvent, BindFailed {}
    private record NodeEvent(Node node, boolean deleted) implements Event {}
    private record PodEvent(Pod pod, boolean deleted) implements Event {}
    private record BindFailed(Decision decision) implements Event {}

    private final KubernetesClient client;
    private final K8sConfig config;
    private final Options options;
    private final ApiWriter api;
    private final AtomicLong bound = new AtomicLong();
    private final AtomicLong decideNanos = new AtomicLong();
    private final AtomicLong bindNanos = new AtomicLong();
    private final Object lock = new Object();
    private volatile Leadership term;
    private volatile boolean leading;
    private CompletableFuture<?> election;
    private volatile boolean closing;
    private final CompletableFuture<Void> ended = new CompletableFuture<>();

    public SecondaryScheduler(KubernetesClient client, K8sConfig config, Options options) {
        this.client = client;
        this.config = config;
        this.options = options;
        this.api = new ApiWriter(client);
    }

    /** Starts: campaigns for the Lease, or schedules at once without leader election. Does not block. */
    public synchronized void start() {
        if (!options.leaderElect()) {
            startLeading();
            return;
        }
        var cfg = new LeaderElectionConfigBuilder()
                .withName(options.leaseName())
                .withLock(new LeaseLock(options.leaseNamespace(), options.leaseName(), options.identity()))
                .withLeaseDuration(options.leaseDuration())
                .withRenewDeadline(options.renewDeadline())
                .withRetryPeriod(options.retryPeriod())
                .withReleaseOnCancel(true)
                .withLeaderCallbacks(new LeaderCallbacks(this::startLeading, this::stopLeading,
                        leader -> LOG.info(options.identity() + ": the leader is now " + leader)))
                .build();
        election = client.leaderElector().withConfig(cfg).build().start();
        // the elector ends when the lease is lost; kube-scheduler exits then, so a fresh process campaigns again
        election.whenComplete((r, e) -> {
            if (!closing) ended.complete(null);
        });
    }

    /** Completes when this replica stopped leading other than by {@link #close()} (the lease was lost). */
    public CompletableFuture<Void> ended() { return ended; }

    public boolean leading() { return leading; }

    /** Pods this replica has bound. */
    public long bound() { return bound.get(); }

    /** Time the loop spent applying events and deciding (the engine's share), in ns. */
    public long decideNanos() { return decideNanos.get(); }

    /** Time bindings spent waiting for the API server (annotation update + Binding), summed over workers, in ns. */
    public long bindNanos() { return bindNanos.get(); }

    /** Reads the model under the loop's lock (tests, metrics); null while not leading. */
    public <T> T inspect(Function<ClusterModel, T> read) {
        Leadership t = term;
        if (t == null) return null;
        synchronized (lock) {
            return read.apply(t.model);
        }
    }

    @Override
    public synchronized void close() {
        closing = true;
        if (election != null) {
            election.cancel(true);   // releases the Lease (releaseOnCancel), which calls stopLeading
            election = null;
        }
        stopLeading();
    }

    private synchronized void startLeading() {
        if (term != null) return;
        LOG.info(options.identity() + ": leading; building the cluster state from the API server");
        term = new Leadership();
        leading = true;
        term.begin();
    }

    private synchronized void stopLeading() {
        Leadership t = term;
        term = null;
        leading = false;
        if (t != null) t.end();
    }

    /** Everything that lives while this replica leads. */
    private final class Leadership {
        final ClusterModel model = new ClusterModel(config, GpuCatalog.standard(), true);
        final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
        final ExecutorService writers = Executors.newVirtualThreadPerTaskExecutor();
        final Semaphore inFlight = new Semaphore(options.maxInFlight());
        final List<SharedIndexInformer<?>> informers = new ArrayList<>();
        final java.util.concurrent.ConcurrentHashMap<String, CompletableFuture<Void>> reportChains = new java.util.concurrent.ConcurrentHashMap<>();
        volatile boolean running = true;
        Thread loop;

        void begin() {
            loop = Thread.ofPlatform().name("gpupool-scheduler-loop").daemon().start(() -> {
                if (watch()) run();
            });
        }

        /** Starts the informers (their first list can be slow on a big cluster), retrying until it works or the term ends. */
        private boolean watch() {
            for (long backoffMs = 1000; running; backoffMs = Math.min(backoffMs * 2, 30_000)) {
                try {
                    informers.add(client.nodes().inform(handler(n -> events.add(new NodeEvent(n, false)), n -> events.add(new NodeEvent(n, true)))));
                    informers.add(client.pods().inAnyNamespace().inform(handler(p -> events.add(new PodEvent(p, false)), p -> events.add(new PodEvent(p, true)))));
                    return true;
                } catch (KubernetesClientException e) {
                    LOG.warning(options.identity() + ": cannot watch nodes and pods yet (" + e.getMessage() + "); retrying in " + backoffMs + " ms");
                    informers.forEach(SharedIndexInformer::close);
                    informers.clear();
                    events.clear();
                    try {
                        Thread.sleep(backoffMs);
                    } catch (InterruptedException ie) {
                        return false;
                    }
                }
            }
            return false;
        }

        void end() {
            running = false;
            informers.forEach(SharedIndexInformer::close);
            if (loop != null) loop.interrupt();
            writers.shutdown();
            try {
                writers.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private <T> ResourceEventHandler<T> handler(java.util.function.Consumer<T> upsert, java.util.function.Consumer<T> delete) {
            return new ResourceEventHandler<>() {
                @Override public void onAdd(T obj) { upsert.accept(obj); }
                @Override public void onUpdate(T oldObj, T newObj) { upsert.accept(newObj); }
                @Override public void onDelete(T obj, boolean unknownFinalState) { delete.accept(obj); }
            };
        }

        private void run() {
            boolean first = true;
            while (running) {
                try {
                    List<Event> batch = new ArrayList<>();
                    Event e = events.poll(1, TimeUnit.SECONDS);
                    if (e != null) batch.add(e);
                    events.drainTo(batch);
                    List<Decision> decisions;
                    List<ClusterModel.Report> reports;
                    List<ClusterModel.Eviction> evictions;
                    long t0 = System.nanoTime();
                    synchronized (lock) {
                        for (Event ev : batch) apply(ev);
                        decisions = new ArrayList<>();
                        if (first) decisions.addAll(model.unboundDecisions());   // finish what a previous leader decided
                        first = false;
                        decisions.addAll(model.schedule());
                        reports = model.drainReports();
                        evictions = model.drainEvictions();
                    }
                    decideNanos.addAndGet(System.nanoTime() - t0);
                    for (Decision d : decisions) write(d);
                    for (var r : reports) report(r);
                    for (var ev : evictions) writers.submit(() -> api.evict(ev));
                } catch (InterruptedException ie) {
                    return;
                } catch (RuntimeException ex) {
                    LOG.log(Level.SEVERE, "scheduling loop failed; state is rebuilt from the API server", ex);
                    synchronized (lock) {
                        model.invalidate();
                    }
                }
            }
        }

        /** Reports on one pod are written in the order they were made, so the last word stays on the pod. */
        private void report(ClusterModel.Report r) {
            String key = r.namespace() + "/" + r.name();
            reportChains.compute(key, (k, prev) -> {
                CompletableFuture<Void> next = (prev == null ? CompletableFuture.<Void>completedFuture(null) : prev)
                        .thenRunAsync(() -> api.unschedulable(r), writers);
                next.whenComplete((x, e) -> reportChains.remove(k, next));
                return next;
            });
        }

        private void apply(Event ev) {
            switch (ev) {
                case NodeEvent(Node n, boolean deleted) -> {
                    if (deleted) model.removeNode(n.getMetadata().getName());
                    else model.setNode(n);
                }
                case PodEvent(Pod p, boolean deleted) -> {
                    if (deleted) model.removePod(Pods.key(p));
                    else model.setPod(p);
                }
                case BindFailed(Decision d) -> model.bindFailed(d);
            }
        }

        private void write(Decision d) throws InterruptedException {
            inFlight.acquire();
            writers.submit(() -> {
                try {
                    long t0 = System.nanoTime();
                    api.bind(d);
                    bindNanos.addAndGet(System.nanoTime() - t0);
                    bound.incrementAndGet();
                    api.scheduled(d);
                } catch (KubernetesClientException ex) {
                    LOG.info("binding " + d.key() + " to " + d.node() + " refused (" + ex.getCode() + "): " + ex.getMessage());
                    api.undo(d);
                    events.add(new BindFailed(d));
                } finally {
                    inFlight.release();
                }
            });
        }
    }
}
