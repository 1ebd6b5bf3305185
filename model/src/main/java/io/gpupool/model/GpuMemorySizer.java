package io.gpupool.model;

import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Fills what a job needs of each GPU from the size of its model when the job does not say (the sizing advisor in
 * {@code predict} implements it; the trace reader and the service apply it before the engine sees the job).
 */
public interface GpuMemorySizer {

    /**
     * What each GPU of a job of this model and shape must hold: each replica's GPUs split the model (tensor
     * parallelism), the replicas are copies (data parallelism).
     *
     * @throws SpecException naming the field of {@link ModelSize} ({@code params}, {@code mode}, {@code precision})
     *                       and the rule, when the size cannot be read
     */
    Need need(ModelSize size, GangShape shape);

    /**
     * @param perGpuMib     memory one GPU must have for the job, in MiB
     * @param modelsThatFit canonical IDs of the catalog's GPU models that hold it, in catalog order
     * @param explanation   how the figure came about, for people
     */
    record Need(long perGpuMib, Set<String> modelsThatFit, String explanation) {
        public Need {
            if (perGpuMib <= 0) throw new IllegalArgumentException("need must be > 0");
            modelsThatFit = java.util.Collections.unmodifiableSet(new LinkedHashSet<>(modelsThatFit));
        }

        /** A share of a GPU (less than all its compute) gets this memory; a whole GPU keeps all of its own. */
        public GpuShare share(GpuShare given) {
            return given.milli() < GpuShare.WHOLE && given.memoryMib() == 0 ? new GpuShare(given.milli(), perGpuMib) : given;
        }

        /**
         * Whole GPUs: the allowed models narrowed to those that hold the need (all that fit when none were named);
         * a share's models are left as given (its memory is checked per GPU, oversubscription included).
         *
         * @throws SpecException (field {@code params}) when no allowed model holds the need
         */
        public Set<String> allowedModels(GpuShare share, Set<String> given) {
            if (share.milli() < GpuShare.WHOLE) return given;
            Set<String> out = new LinkedHashSet<>();
            for (String m : modelsThatFit) if (given.isEmpty() || given.contains(m)) out.add(m);
            if (out.isEmpty()) {
                throw new SpecException(null, "params", explanation + "; no " + (given.isEmpty() ? "GPU model" : "allowed GPU model " + given)
                        + " holds that: give the GPU memory yourself, or more GPUs per replica");
            }
            return out;
        }
    }
}
