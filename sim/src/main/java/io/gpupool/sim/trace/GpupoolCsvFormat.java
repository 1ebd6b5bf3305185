package io.gpupool.sim.trace;

import io.gpupool.model.GangShape;
import io.gpupool.model.GpuMemorySizer;
import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import io.gpupool.model.ModelSize;
import io.gpupool.model.SpecException;

import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The gpupool trace CSV (docs/contracts.md): {@code job_id,submit_time,duration,num_gpus} (seconds) and optional
 * {@code gpu_milli, gpu_mem_mib, gpu_type (A|B), tenant, user, priority, name}, plus gpupool's own
 * {@code replicas, preemptible, estimate, time_limit} (seconds), and {@code model_params, model_mode, model_precision}: a job that
 * names its model (e.g. 7B, train, bf16) but gives no {@code gpu_mem_mib} gets its GPU memory from the sizing
 * advisor ({@link TraceContext#sizer()}). Workflows (issue 19): {@code array_id, array_cap} (a task of an array of
 * which at most array_cap run at once) and {@code depends_on} ('|'-separated ids of jobs submitted before it that must
 * complete first, Slurm's afterok). Unknown columns are ignored; rows may come in any order.
 */
public final class GpupoolCsvFormat implements TraceFormat {
    @Override public String name() { return "gpupool"; }

    @Override public boolean mapsRowsIndependently() { return true; }

    @Override
    public String description() {
        return "gpupool CSV: job_id,submit_time,duration,num_gpus[,gpu_milli,gpu_mem_mib,gpu_type,tenant,user,priority,name,replicas,preemptible,estimate,time_limit,require_nvlink,cpu_milli,host_mem_mib,model_params,model_mode,model_precision,array_id,array_cap,depends_on]";
    }

    @Override
    public RowMapper bind(Columns columns, TraceContext context) {
        columns.require("job_id", "submit_time", "duration", "num_gpus");
        boolean workflows = columns.has("array_id") || columns.has("array_cap") || columns.has("depends_on");
        return (row, shiftMs) -> {
            TraceJob job = map(row, shiftMs, context);
            return workflows ? new TraceJob(job.spec(), job.durationMs(), workflow(row, job.spec().id())) : job;
        };
    }

    private static TraceJob.Workflow workflow(Row row, String id) {
        String array = row.optional("array_id");
        int cap = (int) row.optionalInteger("array_cap", 1, Integer.MAX_VALUE, 0);
        if (cap > 0 && array == null) throw row.error("array_cap", "needs array_id (the array the cap is for)");
        java.util.List<String> deps = new java.util.ArrayList<>();
        String d = row.optional("depends_on");
        if (d != null) {
            for (String t : d.split("\\|")) {
                if (t.isBlank()) continue;
                if (t.trim().equals(id)) throw row.error("depends_on", "a job cannot depend on itself");
                deps.add(t.trim());
            }
        }
        return new TraceJob.Workflow(array, cap, deps);
    }

    private static TraceJob map(Row row, long shiftMs, TraceContext context) {
        String id = row.required("job_id");
        double submit = row.number("submit_time", 0, 1e12);
        double duration = row.number("duration", 1e-3, 1e12);
        int numGpus = (int) row.integer("num_gpus", 1, 1_000_000);
        int milli;
        try {
            milli = GpuShare.requireMilli(null, "gpu_milli", row.optionalInteger("gpu_milli", Long.MIN_VALUE, Long.MAX_VALUE, GpuShare.WHOLE));
        } catch (SpecException e) {
            throw row.error(e);
        }
        long mem = row.optionalInteger("gpu_mem_mib", 0, Long.MAX_VALUE / 2, 0);
        int replicas = (int) row.optionalInteger("replicas", 1, numGpus, 0);
        GangShape shape;
        if (replicas > 0) {
            if (numGpus % replicas != 0) throw row.error("replicas", "num_gpus " + numGpus + " is not a multiple of replicas " + replicas);
            shape = new GangShape(replicas, numGpus / replicas);
        } else {
            shape = context.shapeFor(numGpus);
        }
        try {
            GpuShare.requireOneGpuIfShared(null, "gpu_milli", "gpu_mem_mib", milli, mem, numGpus);
        } catch (SpecException e) {
            throw row.error(e);
        }
        GpuShare share = new GpuShare(milli, mem);
        Set<String> allowed = models(row, "gpu_type", context);
        String params = row.optional("model_params");
        if (params != null && mem == 0) {
            // the job names its model but not its memory: the sizing advisor fills it
            if (context.sizer() == null) throw row.error("model_params", "sizing a job from its model needs the sizing advisor (gpupool simulate has it)");
            try {
                GpuMemorySizer.Need need = context.sizer().need(new ModelSize(params, row.optional("model_mode"), row.optional("model_precision")), shape);
                allowed = need.allowedModels(share, allowed);
                share = need.share(share);
            } catch (SpecException e) {
                throw row.error("model_" + e.field(), e.rule());
            }
        }
        JobSpec.Builder b = JobSpec.builder(id)
                .submitMs(Math.round(submit * 1000) - shiftMs)
                .shape(shape)
                .share(share)
                .allowedModels(allowed);
        String tenant = row.optional("tenant");
        if (tenant != null) b.tenant(tenant);
        String user = row.optional("user");
        if (user != null) b.user(user);
        String jobName = row.optional("name");
        if (jobName != null) b.name(jobName);
        b.priority((int) row.optionalInteger("priority", Integer.MIN_VALUE, Integer.MAX_VALUE, 0));
        b.preemptible(row.bool("preemptible", true));
        b.requireNvlink(row.bool("require_nvlink", false));
        if (context.hostResources()) {
            // per replica, as the service's jobs ask (a history export carries them); absent: none
            b.host(row.optionalInteger("cpu_milli", 0, Long.MAX_VALUE / 4, 0), row.optionalInteger("host_mem_mib", 0, Long.MAX_VALUE / 4, 0));
        }
        if (row.optional("estimate") != null) b.estimateMs(Math.round(row.number("estimate", 1e-3, 1e12) * 1000));
        // a job still running at its limit ends there as timed out (Simulator)
        if (row.optional("time_limit") != null) b.timeLimitMs(Math.round(row.number("time_limit", 1e-3, io.gpupool.model.TimeLimit.MAX_SECONDS) * 1000));
        return build(row, b, duration);
    }

    /** Allowed GPU models from an {@code A|B} cell, resolved through the catalog (aliases included). */
    static Set<String> models(Row row, String column, TraceContext context) {
        Set<String> models = new LinkedHashSet<>();
        String types = row.optional(column);
        if (types == null) return models;
        for (String t : types.split("\\|")) {
            if (t.isBlank()) continue;
            var m = context.catalog().find(t.trim());
            if (m.isEmpty()) throw row.error(column, "unknown GPU model '" + t.trim() + "'; see 'gpupool catalog' for names and aliases");
            models.add(m.get().id());
        }
        return models;
    }

    /** Builds the job, re-labelling a rule the model enforces with this row's file:line. */
    static TraceJob build(Row row, JobSpec.Builder b, double durationSec) {
        try {
            return new TraceJob(b.build(), Math.max(1, Math.round(durationSec * 1000)));
        } catch (SpecException e) {
            throw row.error(e.field(), e.rule());
        }
    }
}
