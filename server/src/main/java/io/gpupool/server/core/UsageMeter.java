package io.gpupool.server.core;

import io.gpupool.agent.protocol.Grant;
import io.gpupool.store.JobEndRow;
import io.gpupool.store.UsageGrantRow;
import io.gpupool.store.Write;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Usage accounting on the engine loop (docs/architecture.md, "Usage accounting"): one stored row per GPU grant of
 * every attempt, opened when the engine starts the attempt and closed when the server releases it, so allocated
 * GPU-time is exactly grant x (release - start). Each telemetry sample of a GPU charges the grants on it for the time
 * since they were last metered, at the sample's utilization and power: energy split by the grants' shares of what is
 * granted on the GPU, utilization by milli / max(1000, granted milli) so no grant is charged more than it holds. The
 * release charges the tail at the GPU's last sample when that is fresh. Every change is written whole through the
 * loop's writes, so the figures survive a restart. Loop thread only.
 */
final class UsageMeter {
    /** A sample older than this is not extended to a release (the node may have stopped reporting long ago). */
    static final long FRESH_MS = 60_000;

    /** A grant being metered; allocCountedUntil: up to when its allocated time went to the metrics counters. */
    private static final class Held {
        UsageGrantRow row;
        long allocCountedUntil;

        Held(UsageGrantRow row, long allocCountedUntil) {
            this.row = row;
            this.allocCountedUntil = allocCountedUntil;
        }

        String gpuKey() { return UsageMeter.gpuKey(row.node(), row.gpu()); }
    }

    /** The catalog id of a GPU's model. */
    interface Models {
        String of(String node, int gpu);
    }

    private final PendingWrites writes;
    private final LoopListener listener;
    private final Models models;
    private final Map<String, List<Held>> byJob = new LinkedHashMap<>();
    private final Map<String, List<Held>> byGpu = new HashMap<>();
    private final Map<String, GpuTelemetry.Sample> lastSample = new HashMap<>();

    UsageMeter(PendingWrites writes, LoopListener listener, Models models) {
        this.writes = writes;
        this.listener = listener;
        this.models = models;
    }

    private static String gpuKey(String node, int gpu) {
        return node + "/" + gpu;
    }

    /** After a restart: the stored rows of grants not yet released; metering goes on from where they stand. */
    void restore(List<UsageGrantRow> open, long now) {
        for (UsageGrantRow r : open) add(new Held(r, now));
    }

    /** A new attempt holds these grants from {@code now}. */
    void opened(String jobId, int attempt, String tenant, String user, List<Grant> grants, long now) {
        for (Grant g : grants) {
            UsageGrantRow row = new UsageGrantRow(jobId, attempt, g.node(), g.gpu(), tenant, user == null ? "" : user,
                    models.of(g.node(), g.gpu()), g.milli(), g.memoryMib(), now, null, 0, 0, now);
            add(new Held(row, now));
            writes.add(new Write.PutUsage(row));
        }
    }

    /** A GPU's telemetry sample: charges the grants on it for the time since each was last metered. */
    void sampled(String node, int gpu, GpuTelemetry.Sample s, long now) {
        String key = gpuKey(node, gpu);
        lastSample.put(key, s);
        List<Held> on = byGpu.get(key);
        if (on == null) return;
        long granted = granted(on);
        for (Held h : on) charge(h, s, granted, now);
    }

    /** The server released the job's current attempt at {@code now}: its rows close, the tail charged at the last fresh sample. */
    void closed(String jobId, long now) {
        List<Held> held = byJob.remove(jobId);
        if (held == null) return;
        for (Held h : held) {
            List<Held> on = byGpu.get(h.gpuKey());
            GpuTelemetry.Sample s = lastSample.get(h.gpuKey());
            if (s != null && now - s.atMs() <= FRESH_MS) charge(h, s, granted(on), now);
            else countAllocated(h, now);
            h.row = h.row.ended(Math.max(now, h.row.startedMs()));
            writes.add(new Write.PutUsage(h.row));
            on.remove(h);
            if (on.isEmpty()) byGpu.remove(h.gpuKey());
        }
    }

    /** Rows left open for jobs that do not run any more (after a restart): closed now. */
    void closeAllBut(Set<String> running, long now) {
        for (String job : List.copyOf(byJob.keySet())) if (!running.contains(job)) closed(job, now);
    }

    /** A job reached a final state. */
    void ended(String jobId, String tenant, String user, String state, long submittedMs, long now) {
        writes.add(new Write.PutJobEnd(new JobEndRow(jobId, tenant, user == null ? "" : user, state, submittedMs, now)));
    }

    private void add(Held h) {
        byJob.computeIfAbsent(h.row.jobId(), k -> new ArrayList<>()).add(h);
        byGpu.computeIfAbsent(h.gpuKey(), k -> new ArrayList<>()).add(h);
    }

    private static long granted(List<Held> on) {
        long sum = 0;
        for (Held h : on) sum += h.row.milli();
        return sum;
    }

    private void charge(Held h, GpuTelemetry.Sample s, long granted, long now) {
        long dt = now - h.row.meteredUntilMs();
        if (dt <= 0) return;
        double milli = h.row.milli();
        double usedMs = s.utilPercent() / 100.0 * milli / Math.max(1000.0, granted) * dt;
        double joules = granted <= 0 ? 0 : s.powerWatts() * milli / granted * dt / 1000.0;
        h.row = h.row.withMeter(h.row.usedGpuMs() + usedMs, h.row.energyJ() + joules, now);
        writes.add(new Write.PutUsage(h.row));
        listener.usage(h.row.tenant(), 0, usedMs / 1000.0, joules);
        countAllocated(h, now);
    }

    private void countAllocated(Held h, long now) {
        long dt = now - h.allocCountedUntil;
        if (dt <= 0) return;
        h.allocCountedUntil = now;
        listener.usage(h.row.tenant(), h.row.milli() / 1000.0 * dt / 1000.0, 0, 0);
    }
}
