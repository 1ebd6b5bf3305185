package io.gpupool.sim.trace;

import io.gpupool.model.GangShape;
import io.gpupool.model.GpuShare;
import io.gpupool.model.HostResources;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;

/**
 * Alibaba's openb pod list (cluster-trace-gpu-v2023, used by the FGD paper):
 * {@code name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time}.
 * {@code gpu_milli} is the share of one GPU a single-GPU task takes (GPU sharing); multi-GPU tasks take
 * whole GPUs. {@code gpu_spec} lists the allowed models ({@code V100M16|V100M32}, catalog aliases).
 * Replay: submit at {@code creation_time}, run from {@code scheduled_time} to {@code deletion_time}
 * (seconds). CPU-only pods and pods never scheduled in the original cluster are counted and left out (a
 * replay measures GPU jobs: their waits, run times and the GPUs they hold).
 * The QoS class ({@code LS}, {@code BE}) becomes the job name. {@code cpu_milli} and {@code memory_mib}
 * become the job's host request (split evenly over its replicas) when the pool's nodes declare host CPU and
 * memory ({@link TraceContext#hostResources()}, as the openb node list does); otherwise they are not read.
 *
 * <p>{@link #shapesOnly()} reads just the demand (the inflation study needs no times; the multigpu50
 * variant has none). There CPU-only pods are tasks too, jobs with no GPU that ask only for their host CPU and
 * memory (as in the FGD paper, where they take CPU that GPU tasks then lack), as long as host resources are
 * read; without them (the pool declares no host capacity, or {@code --ignore-host}) they ask for nothing and
 * are left out.
 */
public final class OpenbFormat implements TraceFormat {
    private final boolean replay;

    public OpenbFormat() {
        this(true);
    }

    private OpenbFormat(boolean replay) {
        this.replay = replay;
    }

    /** The pod list read for its GPU demand only: every job is submitted at 0 with a nominal run time. */
    public static OpenbFormat shapesOnly() {
        return new OpenbFormat(false);
    }

    @Override public String name() { return "openb"; }

    @Override public boolean mapsRowsIndependently() { return true; }

    @Override
    public String description() {
        return "Alibaba openb pod list: name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time,scheduled_time (s); nodes from --nodes";
    }

    @Override
    public RowMapper bind(Columns columns, TraceContext context) {
        columns.require("name", "num_gpu", "gpu_milli");
        if (replay) columns.require("creation_time", "deletion_time", "scheduled_time");
        return (row, shiftMs) -> map(row, shiftMs, context);
    }

    private TraceJob map(Row row, long shiftMs, TraceContext context) {
        String name = row.required("name");
        int gpus = (int) row.integer("num_gpu", 0, 64);
        long milli = row.optionalInteger("gpu_milli", Long.MIN_VALUE, Long.MAX_VALUE, gpus == 0 ? 0 : GpuShare.WHOLE);
        try {
            // a CPU-only pod may say 0: it takes no GPU share
            if (gpus > 0 || milli != 0) GpuShare.requireMilli(null, "gpu_milli", milli);
            GpuShare.requireOneGpuIfShared(null, "gpu_milli", "gpu_mem_mib", (int) milli, 0, gpus);
        } catch (SpecException e) {
            throw row.error(e);
        }
        var models = GpupoolCsvFormat.models(row, "gpu_spec", context);
        if (gpus == 0) return cpuOnly(row, name, context);
        long submitSec = 0;
        double runSec = 1;
        if (replay) {
            submitSec = row.integer("creation_time", 0, Long.MAX_VALUE / 4000);
            long deleted = row.integer("deletion_time", 0, Long.MAX_VALUE / 4000);
            if (row.optional("scheduled_time") == null) return row.ignore("never scheduled in the original cluster (no scheduled_time)");
            long scheduled = row.integer("scheduled_time", submitSec, Long.MAX_VALUE / 4000);
            if (deleted <= scheduled) throw row.error("deletion_time", "must be after scheduled_time " + scheduled + ", got " + deleted);
            runSec = deleted - scheduled;
        }
        GangShape shape = GangShape.forGpuCount(gpus, Math.max(gpus, context.maxGpusPerReplica()));
        JobSpec.Builder b = JobSpec.builder(name)
                .submitMs(submitSec * 1000 - shiftMs)
                .shape(shape)
                .share(new GpuShare((int) milli, 0))
                .allowedModels(models);
        if (context.hostResources()) b.host(hostPerReplica(row, shape.replicas()));
        String qos = row.optional("qos");
        if (qos != null) b.name(qos);
        return GpupoolCsvFormat.build(row, b, runSec);
    }

    /** A CPU-only pod: an inflation task with no GPU where host resources are read, else left out. */
    private TraceJob cpuOnly(Row row, String name, TraceContext context) {
        if (replay) return row.ignore("CPU-only pod (num_gpu 0)");
        if (!context.hostResources()) return row.ignore("CPU-only pod (num_gpu 0; host CPU and memory not modelled)");
        HostResources host = hostPerReplica(row, 1);
        if (!host.requested()) return row.ignore("CPU-only pod asking for no CPU or memory");
        JobSpec.Builder b = JobSpec.builder(name).shape(new GangShape(1, 0)).host(host);
        String qos = row.optional("qos");
        if (qos != null) b.name(qos);
        return GpupoolCsvFormat.build(row, b, 1);
    }

    /** The pod's CPU and memory (absent: none), each replica taking an equal part, rounded up. */
    private static HostResources hostPerReplica(Row row, int replicas) {
        long cpu = row.optionalInteger("cpu_milli", 0, Long.MAX_VALUE / 2, 0);
        long mem = row.optionalInteger("memory_mib", 0, Long.MAX_VALUE / 2, 0);
        return new HostResources(Math.ceilDiv(cpu, replicas), Math.ceilDiv(mem, replicas));
    }
}
