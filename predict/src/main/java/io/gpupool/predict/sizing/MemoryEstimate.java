package io.gpupool.predict.sizing;

import java.util.List;

/**
 * The memory a job needs. The five components come twice: for one model replica as a whole (its
 * micro-batch, before any sharding) and per GPU under the layout. The allocator lines are per GPU.
 *
 * @param weights       model weights
 * @param gradients     gradients (0 when inferring)
 * @param optimizer     optimizer states incl. the fp32 master copy of mixed precision (0 when inferring)
 * @param activations   activations kept for the backward pass (training) or one layer's working set (inference)
 * @param kvCache       keys and values of all tokens of all sequences (inference; 0 when training)
 * @param perGpu        the same five, per GPU, in the same order
 * @param allocated     what tensors occupy on one GPU: the sum of {@code perGpu}
 * @param rounding      what the caching allocator adds by rounding long-lived tensors to its block sizes
 * @param fragmentation cached but unusable memory between the short-lived blocks of a step
 * @param reserved      what the caching allocator holds from the driver: allocated + rounding + fragmentation
 * @param context       CUDA context of the process on the GPU
 * @param total         what one GPU must have: reserved + context
 */
public record MemoryEstimate(
        Layout layout,
        Term weights, Term gradients, Term optimizer, Term activations, Term kvCache,
        List<Term> perGpu,
        Term allocated, Term rounding, Term fragmentation, Term reserved, Term context, Term total) {

    public MemoryEstimate {
        perGpu = List.copyOf(perGpu);
    }

    public List<Term> components() {
        return List.of(weights, gradients, optimizer, activations, kvCache);
    }

    /** Every term, for --explain. */
    public List<Term> all() {
        List<Term> out = new java.util.ArrayList<>(components());
        out.addAll(perGpu);
        out.addAll(List.of(allocated, rounding, fragmentation, reserved, context, total));
        return out;
    }
}
