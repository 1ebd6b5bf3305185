package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The distinct prediction views ({@link RuntimePredictor#track}) of a set of jobs kept across rounds, each with its
 * last answer: jobs of one history share one view, so a round reads again only the few views whose own version moved
 * ({@link RuntimePredictor.Prediction#version()}), where reading each job's prediction costs a cache miss or more per
 * job. A job holds an index into the views while it is in the set ({@link #use}, {@link #release}).
 */
public final class PredictionViews {
    private RuntimePredictor predictor;   // the views are this predictor's
    private long checkedAt = RuntimePredictor.UNKNOWN_VERSION;   // its version when every view was last checked
    private final Map<RuntimePredictor.Prediction, Integer> index = new IdentityHashMap<>();
    private RuntimePredictor.Prediction[] views = new RuntimePredictor.Prediction[16];
    private long[] version = new long[16], ms = new long[16];
    private int[] users = new int[16];
    private int[] free = new int[16];
    private int count, freeCount;

    /** Whether the views are of this predictor (else every job's view must be made again: {@link #reset}). */
    public boolean of(RuntimePredictor p) {
        return p == predictor;
    }

    /** Forgets every view: the jobs' views are to be made again of {@code p}. */
    public void reset(RuntimePredictor p) {
        predictor = p;
        checkedAt = RuntimePredictor.UNKNOWN_VERSION;
        index.clear();
        Arrays.fill(views, 0, count, null);
        count = 0;
        freeCount = 0;
    }

    /** The index of the job's view of the current predictor, counting one more job on it; a new view is read now. */
    public int use(JobState job) {
        RuntimePredictor.Prediction view = job.prediction(predictor);
        Integer known = index.get(view);
        if (known != null) {
            users[known]++;
            return known;
        }
        int k;
        if (freeCount > 0) k = free[--freeCount];
        else {
            if (count == views.length) {
                int n = 2 * count;
                views = Arrays.copyOf(views, n);
                version = Arrays.copyOf(version, n);
                ms = Arrays.copyOf(ms, n);
                users = Arrays.copyOf(users, n);
                free = Arrays.copyOf(free, n);
            }
            k = count++;
        }
        views[k] = view;
        users[k] = 1;
        read(k, predictor.version());
        index.put(view, k);
        return k;
    }

    /** A job on view {@code k} left the set. */
    public void release(int k) {
        if (--users[k] > 0) return;
        index.remove(views[k]);
        views[k] = null;
        free[freeCount++] = k;
    }

    /**
     * Brings the views of {@code jobs[0..size)} up to date before a round reads them: made again of {@code p} where
     * they are of another predictor (each job's index into {@code viewOf}), then {@link #refresh refreshed}.
     */
    public void follow(RuntimePredictor p, JobState[] jobs, int size, int[] viewOf) {
        if (!of(p)) {
            reset(p);
            for (int i = 0; i < size; i++) viewOf[i] = use(jobs[i]);
        }
        refresh();
    }

    /** Reads again the views whose answer may have changed since they were read: none while the predictor's version stands. */
    public void refresh() {
        long v = predictor.version();
        if (v != RuntimePredictor.UNKNOWN_VERSION && v == checkedAt) return;
        for (int k = 0; k < count; k++) {
            if (views[k] == null) continue;
            long own = v == RuntimePredictor.UNKNOWN_VERSION ? RuntimePredictor.UNKNOWN_VERSION : views[k].version();
            if (own == RuntimePredictor.UNKNOWN_VERSION || own != version[k]) read(k, v);
        }
        checkedAt = v;
    }

    /** The answer of view {@code k} when last read (after {@link #refresh}: its answer now), before any time limit. */
    public long ms(int k) {
        return ms[k];
    }

    private void read(int k, long predictorVersion) {
        version[k] = predictorVersion == RuntimePredictor.UNKNOWN_VERSION ? RuntimePredictor.UNKNOWN_VERSION : views[k].version();
        ms[k] = views[k].ms();
    }
}
