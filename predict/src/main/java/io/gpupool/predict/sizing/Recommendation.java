package io.gpupool.predict.sizing;

import io.gpupool.model.GpuModel;

import java.util.List;

/**
 * A GPU model and count that hold the job, the layout that makes it fit, and what a step costs there.
 *
 * @param relativeCost energy per token at board power (GPUs x TDP x step time / tokens per step) over the
 *                     cheapest recommendation's; a proxy for cost (the catalog has no prices)
 */
public record Recommendation(GpuModel gpu, Layout layout, MemoryEstimate memory, StepTimeModel.StepTime time,
                             double relativeCost, List<String> notes) {
    public Recommendation {
        notes = List.copyOf(notes);
    }

    public int count() {
        return layout.gpus();
    }

    /** Joules per step if every GPU draws its board power (TDP). */
    public double energyPerStepJoules() {
        return count() * (double) gpu.tdpWatts() * time.stepSeconds();
    }

    /** Joules per token processed: every replica processes its batch in a step. */
    public double energyPerTokenJoules(SizingRequest r) {
        return energyPerStepJoules() / tokensPerStep(r, layout);
    }

    /** Tokens one step processes over all data-parallel replicas: B x S x dp. */
    static double tokensPerStep(SizingRequest r, Layout layout) {
        return (double) r.batch() * r.seq() * layout.dp();
    }
}
