package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * themis' pending jobs kept across rounds, each with the terms of its fairness ratio that stay fixed while it waits
 * (submit time, attained run time, GPUs, time limit) in arrays, and its prediction as an index into the queue's
 * {@link PredictionViews}. A round then computes every ratio from the arrays, reading again only the views whose own
 * version moved, where reading each job's state and prediction in every round costs a cache miss or more per queued job.
 *
 * <p>The scheduler's changes ({@link QueueObserver}) are applied, in the order told, when the next queue is built, so
 * a round's own starts do not change the arrays under its walk.
 */
final class FairnessTerms {
    private final List<JobState> changed = new ArrayList<>();
    private final List<Boolean> added = new ArrayList<>();
    private final Map<JobState, Integer> slotOf = new HashMap<>();
    private JobState[] jobs = new JobState[16];
    private long[] seqs = new long[16], submitMs = new long[16], attainedMs = new long[16], limitMs = new long[16];
    private double[] gpus = new double[16];
    private int[] viewOf = new int[16];
    private int size;
    // one round's queue at a time: its keys, and copies of the jobs and arrival orders, in arrays kept between rounds
    private final KeyedQueue.Scratch scratch = new KeyedQueue.Scratch();

    private final PredictionViews views = new PredictionViews();   // the pending jobs' predictions, by viewOf

    void queued(JobState job) {
        changed.add(job);
        added.add(Boolean.TRUE);
    }

    void dequeued(JobState job) {
        changed.add(job);
        added.add(Boolean.FALSE);
    }

    /**
     * This round's queue by rho (highest first, ties to arrival order), or null when {@code pending} is not the set of
     * jobs told (a caller that does not report the queue's changes): the caller then computes the keys itself.
     */
    JobQueue queue(PolicyContext ctx, int pendingCount, int contending, double poolGpus) {
        apply(ctx);
        if (pendingCount != size) return null;
        views.follow(ctx.predictor(), jobs, size, viewOf);
        long now = ctx.nowMs();
        scratch.fit(Math.max(1, size));
        for (int i = 0; i < size; i++) {
            long predicted = views.ms(viewOf[i]);
            long runMs = limitMs[i] < 0 ? predicted : Math.min(predicted, limitMs[i]);   // as JobState capped it
            scratch.keys[i] = ThemisPolicy.rho(now, runMs, attainedMs[i], submitMs[i], gpus[i], contending, poolGpus);
        }
        // copies: the queue may take requeued jobs in (its arrays), and these arrays change as the next changes apply
        System.arraycopy(jobs, 0, scratch.jobs, 0, size);
        System.arraycopy(seqs, 0, scratch.seqs, 0, size);
        return new KeyedQueue(scratch.jobs, scratch.keys, scratch.seqs, size, j -> ThemisPolicy.rho(ctx, j, contending, poolGpus), true, scratch.heap);
    }

    private void apply(PolicyContext ctx) {
        for (int i = 0; i < changed.size(); i++) {
            JobState j = changed.get(i);
            if (added.get(i)) add(j, ctx.nowMs());
            else remove(j);
        }
        changed.clear();
        added.clear();
    }

    private void add(JobState j, long nowMs) {
        if (slotOf.putIfAbsent(j, size) != null) throw new IllegalStateException("job " + j.id() + " entered a queue it was in");
        if (size == jobs.length) grow();
        jobs[size] = j;
        seqs[size] = j.seq();
        submitMs[size] = j.spec().submitTimeMs();
        attainedMs[size] = j.attainedMs(nowMs);   // a job told as queued and not told as dequeued since is pending: fixed
        limitMs[size] = j.spec().timeLimitMs().orElse(-1);
        gpus[size] = j.gpuUnits();
        viewOf[size] = views.of(null) ? -1 : views.use(j);   // -1: no predictor yet (the next queue makes it)
        size++;
    }

    private void remove(JobState j) {
        Integer at = slotOf.remove(j);
        if (at == null) throw new IllegalStateException("job " + j.id() + " left a queue it was not in");
        if (viewOf[at] >= 0) views.release(viewOf[at]);
        int last = --size;
        if (at != last) {
            jobs[at] = jobs[last];
            seqs[at] = seqs[last];
            submitMs[at] = submitMs[last];
            attainedMs[at] = attainedMs[last];
            limitMs[at] = limitMs[last];
            gpus[at] = gpus[last];
            viewOf[at] = viewOf[last];
            slotOf.put(jobs[at], at);
        }
        jobs[last] = null;
    }

    private void grow() {
        int n = 2 * jobs.length;
        jobs = Arrays.copyOf(jobs, n);
        seqs = Arrays.copyOf(seqs, n);
        submitMs = Arrays.copyOf(submitMs, n);
        attainedMs = Arrays.copyOf(attainedMs, n);
        limitMs = Arrays.copyOf(limitMs, n);
        gpus = Arrays.copyOf(gpus, n);
        viewOf = Arrays.copyOf(viewOf, n);
    }
}
