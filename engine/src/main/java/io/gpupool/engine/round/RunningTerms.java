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
     * Fills the running jobs, their expected ends at {@code ctx.nowMs()} and their arrival orders ({@link ExpectedEnds}
     * computes the same from each job); the arrays are new, of length {@link #size()}.
     */
    void fill(PolicyContext ctx, JobState[] outJobs, long[] outEnd, long[] outSeq) {
        views.follow(ctx.predictor(), jobs, size, viewOf);
        long now = ctx.nowMs();
        for (int i = 0; i < size; i++) {
            long predicted = views.ms(viewOf[i]);
            long runMs = limitMs[i] < 0 ? predicted : Math.min(predicted, limitMs[i]);   // as JobState capped it
            long attained = attainedBeforeMs[i] + (now - runStartMs[i]);
            outEnd[i] = now + Math.max(ExpectedEnds.MIN_REMAINING_MS, runMs - attained);
            outJobs[i] = jobs[i];
            outSeq[i] = seqs[i];
        }
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
