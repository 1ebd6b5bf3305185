package io.gpupool.engine.policy;

/** What the dispatcher does when the next job in policy order does not fit. */
public enum BlockingMode {
    /** Stop: nothing behind it starts (strict FCFS). */
    STRICT,
    /** Reserve GPUs for it at the earliest time they free up; later jobs start only if they do not delay it (EASY). */
    BACKFILL,
    /** Go on with the next job. */
    SKIP
}
