package io.gpupool.store;

import java.util.Set;

/**
 * A page of jobs in arrival order.
 *
 * @param tenant      only this tenant's jobs; null = all
 * @param states      only these states; empty = all
 * @param sinceMs     submitted at or after; null = no bound
 * @param untilMs     submitted before; null = no bound
 * @param afterSeq    the cursor: jobs with a larger seq than this
 * @param limit       page size
 */
public record JobQuery(String tenant, Set<String> states, Long sinceMs, Long untilMs, long afterSeq, int limit) {
    public JobQuery {
        states = Set.copyOf(states);
    }
}
