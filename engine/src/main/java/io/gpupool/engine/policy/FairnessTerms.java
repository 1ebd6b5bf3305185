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
    // the slots in the last round's order, then the slots added since (-1: a slot removed since); rankOf inverts it
    private int[] ranked = new int[16];
    private int rankedCount;
    private int[] rankOf = new int[16];
    private boolean ranksKept = true;          // ranked holds every slot (false after a round by heap)
    private double[] keys = new double[16];    // per slot, this round's rho
    private JobState[] inOrder = new JobState[16];   // one round's queue: copies of the jobs in order (the walk's own)
    private final KeyedQueue.Scratch heapScratch = new KeyedQueue.Scratch();   // a long queue's round: its heap's arrays

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
     *
     * <p>A queue of up to {@value ThemisPolicy#SORTED_QUEUE_UP_TO} jobs is sorted whole, from the last round's order:
     * rounds follow each other closely and rho moves slowly, so that order is nearly this one's and an insertion sort
     * costs about one comparison per job plus the few overtakings since, where a heap of the queue cost some 20
     * comparisons for each job the walk takes (a backfill walk takes a hundred). A longer queue has more overtakings per
     * round than jobs (10,000 queued, 10 s apart: some 11,000), so it goes through a heap.
     */
    JobQueue queue(PolicyContext ctx, int pendingCount, int contending, double poolGpus) {
        apply(ctx);
        if (pendingCount != size) return null;
        views.follow(ctx.predictor(), jobs, size, viewOf);
        long now = ctx.nowMs();
        for (int i = 0; i < size; i++) {
            long predicted = views.ms(viewOf[i]);
            long runMs = limitMs[i] < 0 ? predicted : Math.min(predicted, limitMs[i]);   // as JobState capped it
            keys[i] = ThemisPolicy.rho(now, runMs, attainedMs[i], submitMs[i], gpus[i], contending, poolGpus);
        }
        if (size > ThemisPolicy.SORTED_QUEUE_UP_TO) {
            // a long queue: a heap of this round's keys, O(n), and O(log n) for each job the walk takes (it takes
            // a few hundred at most), where its many overtakings per round would make the insertions cost more
            ranksKept = false;   // the next sorted round sorts from scratch
            rankedCount = 0;
            heapScratch.fit(size);
            System.arraycopy(jobs, 0, heapScratch.jobs, 0, size);   // copies: the queue may take requeued jobs in
            System.arraycopy(keys, 0, heapScratch.keys, 0, size);
            System.arraycopy(seqs, 0, heapScratch.seqs, 0, size);
            return new KeyedQueue(heapScratch.jobs, heapScratch.keys, heapScratch.seqs, size, j -> ThemisPolicy.rho(ctx, j, contending, poolGpus), true, heapScratch.heap);
        }
        sortRanked();
        if (inOrder.length < size) inOrder = new JobState[jobs.length];
        for (int i = 0; i < size; i++) inOrder[i] = jobs[ranked[i]];
        return JobQueue.inOrder(inOrder, size, (a, b) -> Double.compare(ThemisPolicy.rho(ctx, b, contending, poolGpus), ThemisPolicy.rho(ctx, a, contending, poolGpus)));
    }

    /**
     * Drops the removed slots from {@code ranked} and sorts it by this round's keys: by insertion, as it is nearly
     * sorted, unless the order moved much since (a long gap between rounds, a new predictor) or the last round went
     * through a heap: then, past a few moves per job, by a heap of all slots, O(n log n).
     */
    private void sortRanked() {
        long movesLeft = ranksKept ? 8L * size + 256 : -1;   // after a round by heap there is no last order to start from
        ranksKept = true;
        int n = 0;
        for (int r = 0; r < rankedCount && movesLeft >= 0; r++) {
            int slot = ranked[r];
            if (slot < 0) continue;
            int i = n++;
            while (i > 0 && before(slot, ranked[i - 1])) {
                ranked[i] = ranked[i - 1];
                i--;
                movesLeft--;
            }
            ranked[i] = slot;
        }
        if (movesLeft < 0) {
            // the slots are 0..size-1 (removal fills the gap from the last): a heap of those indices is every job
            IndexHeap all = new IndexHeap(size) {
                @Override protected boolean before(int a, int b) { return FairnessTerms.this.before(a, b); }
            };
            all.heapify();
            if (ranked.length < size) ranked = new int[jobs.length];
            for (int i = 0; i < size; i++) ranked[i] = all.takeFirst();
            n = size;
        }
        rankedCount = n;
        for (int i = 0; i < n; i++) rankOf[ranked[i]] = i;
    }

    /** Higher rho first, then arrival: KeyedQueue's descending order. */
    private boolean before(int a, int b) {
        int c = Double.compare(keys[b], keys[a]);
        return c != 0 ? c < 0 : seqs[a] < seqs[b];
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
        if (ranksKept) {
            if (rankedCount == ranked.length) ranked = Arrays.copyOf(ranked, 2 * rankedCount);
            rankOf[size] = rankedCount;
            ranked[rankedCount++] = size;
        }
        size++;
    }

    private void remove(JobState j) {
        Integer at = slotOf.remove(j);
        if (at == null) throw new IllegalStateException("job " + j.id() + " left a queue it was not in");
        if (viewOf[at] >= 0) views.release(viewOf[at]);
        if (ranksKept) ranked[rankOf[at]] = -1;
        int last = --size;
        if (at != last) {
            if (ranksKept) {
                ranked[rankOf[last]] = at;
                rankOf[at] = rankOf[last];
            }
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
        rankOf = Arrays.copyOf(rankOf, n);
        keys = Arrays.copyOf(keys, n);
    }
}
