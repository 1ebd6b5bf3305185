package io.gpupool.server.metrics;

import io.gpupool.server.core.GpuTelemetry;
import io.gpupool.server.core.LoopListener;
import io.gpupool.server.core.PoolSnapshot;
import io.gpupool.store.GroupCommitWriter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * Everything /metrics shows, through Micrometer's Prometheus registry:
 * <ul>
 *   <li>scheduler: queue length and running jobs per tenant, decisions (started / preempted), round latency
 *       histogram, allocated and total GPUs per model, submissions, rejections and job ends;</li>
 *   <li>GPUs, named and labelled as NVIDIA's dcgm-exporter does (DCGM_FI_DEV_GPU_UTIL, _FB_USED, _FB_FREE,
 *       _POWER_USAGE, _GPU_TEMP with gpu, UUID, device, modelName, Hostname), from node telemetry, so
 *       existing DCGM dashboards work unchanged;</li>
 *   <li>usage per tenant (counters from this process's start, see UsageMeter): GPU-seconds allocated (counted as
 *       telemetry arrives and at each release) and used (telemetry utilization), energy in joules;</li>
 *   <li>store: commits, writes, writer backlog, last commit time.</li>
 * </ul>
 * Gauges read the latest pool snapshot; new tenants, models and GPUs are registered when first seen.
 */
public final class ServiceMetrics implements LoopListener {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Timer round;
    private final Counter started;
    private final Counter preempted;
    private final GpuTelemetry telemetry;
    private volatile Supplier<PoolSnapshot> snapshot = PoolSnapshot::empty;
    private final Set<String> registered = new HashSet<>();

    public ServiceMetrics(GpuTelemetry telemetry) {
        this.telemetry = telemetry;
        this.round = Timer.builder("gpupool.scheduler.round").description("Duration of one scheduling round (decision latency)")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(10_000)).maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry);
        this.started = Counter.builder("gpupool.scheduler.decisions").description("Scheduling decisions").tag("outcome", "started").register(registry);
        this.preempted = Counter.builder("gpupool.scheduler.decisions").description("Scheduling decisions").tag("outcome", "preempted").register(registry);
    }

    public void attach(Supplier<PoolSnapshot> snapshots, GroupCommitWriter writer) {
        this.snapshot = snapshots;
        FunctionCounter.builder("gpupool.store.commits", writer, GroupCommitWriter::commits).description("Store transactions committed").register(registry);
        FunctionCounter.builder("gpupool.store.writes", writer, GroupCommitWriter::writes).description("Rows written by the store writer").register(registry);
        Gauge.builder("gpupool.store.backlog", writer, GroupCommitWriter::backlog).description("Write groups waiting for the store writer").register(registry);
        Gauge.builder("gpupool.store.last.commit.seconds", writer, w -> w.lastCommitNanos() / 1e9).description("Duration of the last commit (apply + fsync)").register(registry);
    }

    @Override
    public void round(long nanos, int nStarted, int nPreempted) {
        round.record(nanos, TimeUnit.NANOSECONDS);
        if (nStarted > 0) started.increment(nStarted);
        if (nPreempted > 0) preempted.increment(nPreempted);
    }

    @Override
    public void submitted(String tenant) {
        registry.counter("gpupool.jobs.submitted", "tenant", tenant).increment();
    }

    @Override
    public void rejected(String tenant) {
        registry.counter("gpupool.jobs.rejected", "tenant", tenant).increment();
    }

    @Override
    public void finished(String tenant, String state) {
        registry.counter("gpupool.jobs.finished", "tenant", tenant, "state", state).increment();
    }

    @Override
    public void usage(String tenant, double allocatedGpuSeconds, double usedGpuSeconds, double joules) {
        if (allocatedGpuSeconds > 0) {
            Counter.builder("gpupool.tenant.gpu.seconds.allocated").description("GPU-seconds granted to the tenant's jobs (grant x time held)")
                    .tag("tenant", tenant).register(registry).increment(allocatedGpuSeconds);
        }
        if (usedGpuSeconds > 0) {
            Counter.builder("gpupool.tenant.gpu.seconds.used").description("GPU-seconds of measured utilization charged to the tenant's jobs")
                    .tag("tenant", tenant).register(registry).increment(usedGpuSeconds);
        }
        if (joules > 0) {
            Counter.builder("gpupool.tenant.energy.joules").description("GPU energy charged to the tenant's jobs (power telemetry split by grants)")
                    .tag("tenant", tenant).register(registry).increment(joules);
        }
    }

    /** The Prometheus text exposition, after registering gauges for anything new in the pool. */
    public String scrape() {
        registerNew(snapshot.get());
        return registry.scrape();
    }

    public String contentType() {
        return "text/plain; version=0.0.4; charset=utf-8";
    }

    private synchronized void registerNew(PoolSnapshot s) {
        for (PoolSnapshot.TenantShare t : s.tenants()) {
            if (!registered.add("tenant/" + t.name())) continue;
            String name = t.name();
            tenantGauge("gpupool.queue.length", "Pending jobs of the tenant", name, x -> x.pending());
            tenantGauge("gpupool.jobs.running", "Running jobs of the tenant", name, x -> x.running());
            tenantGauge("gpupool.tenant.gpus", "GPUs the tenant holds", name, PoolSnapshot.TenantShare::gpusHeld);
            tenantGauge("gpupool.tenant.share", "Share of the pool the tenant holds (0..1)", name, PoolSnapshot.TenantShare::share);
            tenantGauge("gpupool.tenant.entitlement", "Share the tenant is entitled to by weight (0..1)", name, PoolSnapshot.TenantShare::entitlement);
        }
        for (PoolSnapshot.NodeView n : s.nodes()) {
            if (registered.add("model/" + n.model())) {
                String model = n.model();
                Gauge.builder("gpupool.gpus.allocated", this, m -> allocated(model)).description("GPUs allocated (fractional shares count their part)")
                        .tag("model", model).register(registry);
                Gauge.builder("gpupool.gpus.capacity", this, m -> total(model)).description("GPUs in the pool").tag("model", model).register(registry);
            }
            for (PoolSnapshot.GpuView g : n.gpus()) {
                if (!registered.add("gpu/" + n.name() + "/" + g.index())) continue;
                dcgm("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", n, g, GpuTelemetry.Sample::utilPercent);
                dcgm("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", n, g, x -> x.fbUsedMib());
                dcgm("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", n, g, x -> x.fbFreeMib());
                dcgm("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", n, g, GpuTelemetry.Sample::powerWatts);
                dcgm("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", n, g, GpuTelemetry.Sample::tempC);
            }
        }
        if (registered.add("pending")) {
            Gauge.builder("gpupool.jobs.pending", this, m -> snapshot.get().pendingCount()).description("Pending jobs of all tenants").register(registry);
        }
    }

    private void tenantGauge(String name, String help, String tenant, ToDoubleFunction<PoolSnapshot.TenantShare> f) {
        Gauge.builder(name, this, m -> snapshot.get().tenants().stream().filter(t -> t.name().equals(tenant)).mapToDouble(f).findFirst().orElse(0))
                .description(help).tag("tenant", tenant).register(registry);
    }

    private void dcgm(String name, String help, PoolSnapshot.NodeView n, PoolSnapshot.GpuView g, ToDoubleFunction<GpuTelemetry.Sample> f) {
        String node = n.name();
        int gpu = g.index();
        Gauge.builder(name, telemetry, t -> {
                    GpuTelemetry.Sample s = t.get(node, gpu);
                    return s == null ? Double.NaN : f.applyAsDouble(s);
                })
                .description(help).tag("gpu", String.valueOf(gpu)).tag("UUID", g.uuid()).tag("device", "nvidia" + gpu)
                .tag("modelName", n.productName()).tag("Hostname", node).register(registry);
    }

    private double allocated(String model) {
        return snapshot.get().nodes().stream().filter(n -> n.model().equals(model)).flatMap(n -> n.gpus().stream())
                .mapToDouble(g -> g.usedMilli() / 1000.0).sum();
    }

    private double total(String model) {
        return snapshot.get().nodes().stream().filter(n -> n.model().equals(model)).mapToInt(n -> n.gpus().size()).sum();
    }
}
