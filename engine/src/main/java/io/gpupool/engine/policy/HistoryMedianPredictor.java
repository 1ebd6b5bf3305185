package io.gpupool.engine.policy;

import io.gpupool.model.JobSpec;

import java.util.HashMap;
import java.util.Map;

/**
 * The default predictor: the job's own estimate when given; else the median run time of the same
 * user's past jobs with the same name, then of the same user, then of everyone; else a default.
 * Each history keeps the latest {@value #WINDOW} run times.
 */
public final class HistoryMedianPredictor implements RuntimePredictor {
    static final int WINDOW = 64;
    private final Map<String, RecentRunTimes> history = new HashMap<>();
    private final RecentRunTimes global = new RecentRunTimes(WINDOW);
    private final long defaultMs;
    private long observations;

    public HistoryMedianPredictor(long defaultMs) {
        this.defaultMs = defaultMs;
    }

    @Override public String name() { return "history-median"; }

    @Override
    public long predictMs(JobSpec job) {
        if (job.runtimeEstimateMs().isPresent()) return job.runtimeEstimateMs().getAsLong();
        RecentRunTimes r = history.get(userNameKey(job));
        if (r == null || r.size() == 0) r = history.get(userKey(job));
        if (r == null || r.size() == 0) r = global;
        return r.size() == 0 ? defaultMs : Math.max(1, r.median());
    }

    /** The job's groups resolved once: the same answer as {@link #predictMs}, without building keys each time. */
    @Override
    public Prediction track(JobSpec job) {
        if (job.runtimeEstimateMs().isPresent()) {
            long estimate = job.runtimeEstimateMs().getAsLong();
            return () -> estimate;
        }
        // an empty group answers as a missing one does, so creating the groups now changes no prediction
        RecentRunTimes byName = history.computeIfAbsent(userNameKey(job), k -> new RecentRunTimes(WINDOW));
        RecentRunTimes byUser = history.computeIfAbsent(userKey(job), k -> new RecentRunTimes(WINDOW));
        return () -> {
            RecentRunTimes r = byName.size() > 0 ? byName : byUser.size() > 0 ? byUser : global;
            return r.size() == 0 ? defaultMs : Math.max(1, r.median());
        };
    }

    @Override
    public long version() {
        return observations;
    }

    @Override
    public void observe(JobSpec job, long runMs) {
        if (runMs <= 0) return;
        observations++;
        history.computeIfAbsent(userNameKey(job), k -> new RecentRunTimes(WINDOW)).add(runMs);
        history.computeIfAbsent(userKey(job), k -> new RecentRunTimes(WINDOW)).add(runMs);
        global.add(runMs);
    }

    private static String userNameKey(JobSpec j) { return "un\u0000" + j.user() + "\u0000" + j.name(); }

    private static String userKey(JobSpec j) { return "u\u0000" + j.user(); }
}
