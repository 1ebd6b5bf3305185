package io.gpupool.engine.policy;

/**
 * The settings of a policy whose only setting is EASY backfill's (fcfs-backfill, themis).
 *
 * @param backfillDepth queued jobs behind the reserved one that backfill considers per round
 */
public record BackfillArgs(int backfillDepth) implements PolicyArgs {
    public static final BackfillArgs DEFAULTS = new BackfillArgs(PolicyArgs.DEFAULT_BACKFILL_DEPTH);

    public BackfillArgs {
        PolicyArgs.requireBackfillDepth(backfillDepth);
    }
}
