package io.gpupool.engine.policy;

import io.gpupool.model.SpecException;

/**
 * The typed settings of one policy: a record, with its defaults as a constant, whose compact constructor checks
 * every field and throws a {@link SpecException} naming it ({@link #require}). Read from a map of camelCase keys
 * by {@link PolicyType#parseArgs}, which names the policy in the error; the record's component names are the keys.
 * Policies with the same settings share a record ({@link BackfillArgs}).
 */
public interface PolicyArgs {
    /** The settings of a policy that has none. */
    record None() implements PolicyArgs {
        public static final None INSTANCE = new None();
    }

    /** Throws the error of a bad setting, naming the field ({@link PolicyType#parseArgs} adds the policy). */
    static void require(boolean ok, String field, String rule) {
        if (!ok) throw new SpecException("policy settings", field, rule);
    }

    /** Default of {@code backfillDepth}, the setting of every policy whose blocked jobs get EASY reservations. */
    int DEFAULT_BACKFILL_DEPTH = 200;

    /** The rule of {@code backfillDepth}: queued jobs behind a reserved one that backfill considers per round. */
    static void requireBackfillDepth(int depth) {
        require(depth >= 1, "backfillDepth", "must be >= 1, got " + depth);
    }
}
