package io.gpupool.engine.policy;

/**
 * A queue policy: a name, its declared {@link PolicyTraits} and an order ({@link QueueOrder}). A policy that
 * has a rule for starting jobs implements {@link Admission}, one that stops running jobs implements
 * {@link Preemption}, one whose order is a fixed key implements {@link StandingOrder}; the traits say which.
 * The round (dispatch, reservation, preemption) does the rest, the same for all.
 */
public interface QueuePolicy extends QueueOrder {
    /** The name it is registered under ({@link PolicyRegistry}). */
    String name();

    /** What the round may rely on; constant for the policy's life. */
    PolicyTraits traits();
}
