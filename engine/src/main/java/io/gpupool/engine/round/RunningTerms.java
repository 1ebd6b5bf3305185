package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.engine.policy.PredictionViews;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The running jobs kept across rounds with the terms of their expected ends that stay fixed while they run (start of
 * the run, run time before it, time limit, arrival order) in arrays, and their predictions as indices into
 * {@link PredictionViews}: an EASY reservation after a completion (every completion changes the cluster, so the
 * last reservation is not reused) reads only the views whose history learned, where reading every running job's
 * state and prediction costs a cache miss or more per job. The scheduler tells it of every start and stop as they
 * happen ({@link Round#runStarted}, {@link Round#runEnded}).
 */
final class RunningTerms {
    private final Map<JobState, Integer> slotOf = new HashMap<>();
    private JobState[] jobs = new JobState[16];
    private long[] seqs = new long[16], runStartMs = new long[16], attainedBeforeMs = new long[16], limitMs = new long[16];
    private int[] viewOf = new int[16];
    private int size;
    private long[] endScratch = new long[0];
    private int[] heapScratch = new int[0];
    private final PredictionViews views = new PredictionViews();

    void started(JobState j) {
        if (slotOf.putIfAbsent(j, size) != null) throw new IllegalStateException("job " + j.id() + " started while running");
        if (size == jobs.length) grow();
        jobs[size] = j;
        seqs[size] = j.seq();
        runStartMs[size] = j.runStartMs();
        attainedBeforeMs[size] = j.attainedMs(j.runStartMs());   // at the start of the run: the run time before it
        limitMs[size] = j.spec().timeLimitMs().orElse(-1);
        viewOf[size] = views.of(null) ? -1 : views.use(j);       // -1: no predictor yet (the next fill makes it)
        size++;
    }

    void ended(JobState j) {
        Integer at = slotOf.remove(j);
        if (at == null) throw new IllegalStateException("job " + j.id() + " ended while not running");
        if (viewOf[at] >= 0) views.release(viewOf[at]);
        int last = --size;
        if (at != last) {
            jobs[at] = jobs[last];
            seqs[at] = seqs[last];
            runStartMs[at] = runStartMs[last];
            attainedBeforeMs[at] = attainedBeforeMs[last];
            limitMs[at] = limitMs[last];
            viewOf[at] = viewOf[last];
            slotOf.put(jobs[at], at);
        }
        jobs[last] = null;
    }

    int size() { return size; }

    /**
     * The running jobs' expected ends at {@code ctx.nowMs()} ({@link ExpectedEnds} computes the same from each job), by
     * slot, in a scratch array this keeps (entries [0, size) filled) and fills again at the next call: the ends of one
     * reservation, read with {@link #jobs()} and {@link #seqs()} while no job starts or ends.
     */
    long[] fillEnds(PolicyContext ctx) {
        views.follow(ctx.predictor(), jobs, size, viewOf);
        if (endScratch.length < size) endScratch = new long[jobs.length];
        long now = ctx.nowMs();
        for (int i = 0; i < size; i++) {
            long predicted = views.ms(viewOf[i]);
            long runMs = limitMs[i] < 0 ? predicted : Math.min(predicted, limitMs[i]);   // as JobState capped it
            long attained = attainedBeforeMs[i] + (now - runStartMs[i]);
            endScratch[i] = now + Math.max(ExpectedEnds.MIN_REMAINING_MS, runMs - attained);
        }
        return endScratch;
    }

    /** The running jobs by slot (entries [0, size)); read only, and only until the next start or end. */
    JobState[] jobs() { return jobs; }

    /** Their arrival orders by slot, as {@link #jobs()}. */
    long[] seqs() { return seqs; }

    /** Scratch for the heap of one reservation's ends (its length may be short of size: the heap then makes its own). */
    int[] heapScratch() {
        if (heapScratch.length < size) heapScratch = new int[jobs.length];
        return heapScratch;
    }

    private void grow() {
        int n = 2 * jobs.length;
        jobs = Arrays.copyOf(jobs, n);
        seqs = Arrays.copyOf(seqs, n);
        runStartMs = Arrays.copyOf(runStartMs, n);
        attainedBeforeMs = Arrays.copyOf(attainedBeforeMs, n);
        limitMs = Arrays.copyOf(limitMs, n);
        viewOf = Arrays.copyOf(viewOf, n);
    }
}
