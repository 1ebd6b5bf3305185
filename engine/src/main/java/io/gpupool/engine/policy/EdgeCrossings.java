package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.OptionalLong;
import java.util.function.ToDoubleFunction;

/** For policies that rank a running job by bands of its attained GPU-time (las's queues, gittins' levels). */
final class EdgeCrossings {
    private EdgeCrossings() {}

    /**
     * The next moment a running job's attained GPU-time reaches the upper edge of its band, in GPU-seconds as
     * {@code nextEdgeGpuSec} gives it (infinite: the last band, no edge); empty when no running job has one.
     */
    static OptionalLong next(PolicyContext ctx, ToDoubleFunction<JobState> nextEdgeGpuSec) {
        long now = ctx.nowMs();
        long best = Long.MAX_VALUE;
        for (JobState j : ctx.running()) {
            if (j.gpuUnits() <= 0) continue;
            double edge = nextEdgeGpuSec.applyAsDouble(j);
            if (Double.isInfinite(edge)) continue;
            best = Math.min(best, crossingMs(j, edge, now));
        }
        return best == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(best);
    }

    /** When the running job (holding GPUs) reaches {@code edgeGpuSec} of attained GPU-time, as seen at {@code now}: at least now + 1 ms. */
    static long crossingMs(JobState j, double edgeGpuSec, long now) {
        double needGpuMs = edgeGpuSec * 1000.0 - j.attainedGpuMs(now);
        return now + Math.max(1, (long) Math.ceil(needGpuMs / j.gpuUnits()));
    }
}
