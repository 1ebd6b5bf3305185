package io.gpupool.engine.round;

import io.gpupool.engine.policy.Admission;
import io.gpupool.engine.policy.PolicyTraits;
import io.gpupool.engine.policy.Preemption;
import io.gpupool.engine.policy.QueuePolicy;

/**
 * A policy as the round uses it, resolved once per configuration: its order, its admission rule (none: admit all),
 * its preemption rule (null: never preempts) and its declared traits.
 */
public record PolicyParts(QueuePolicy policy, Admission admission, Preemption preemption, PolicyTraits traits) {
    public static PolicyParts of(QueuePolicy p) {
        return new PolicyParts(p, p instanceof Admission a ? a : Admission.NONE, p instanceof Preemption pr ? pr : null, p.traits());
    }

    public boolean has(PolicyTraits.Trait t) {
        return traits.has(t);
    }
}
