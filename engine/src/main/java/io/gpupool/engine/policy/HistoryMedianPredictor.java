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
    private final Map<String, User> users = new HashMap<>();   // by user, then name: no key is built per job
    private final History global = new History();
    private final long defaultMs;
    private long observations;

    public HistoryMedianPredictor(long defaultMs) {
        this.defaultMs = defaultMs;
    }

    @Override public String name() { return "history-median"; }

    @Override
    public long predictMs(JobSpec job) {
        if (job.runtimeEstimateMs().isPresent()) return job.runtimeEstimateMs().getAsLong();
        User u = users.get(job.user());
        History r = u == null ? null : u.byName.get(job.name());
        if (r == null || r.times.size() == 0) r = u == null ? null : u.all;
        if (r == null || r.times.size() == 0) r = global;
        return r.times.size() == 0 ? defaultMs : Math.max(1, r.times.median());
    }

    /**
     * The job's groups resolved once: the same answer as {@link #predictMs}, without building keys each time. Jobs of
     * one user and name share one view, whose {@link Prediction#version()} moves only when the history it reads learns.
     */
    @Override
    public Prediction track(JobSpec job) {
        if (job.runtimeEstimateMs().isPresent()) return new Estimate(job.runtimeEstimateMs().getAsLong());
        // an empty group answers as a missing one does, so creating the groups now changes no prediction
        User u = user(job.user());
        Learned view = u.views.get(job.name());   // not computeIfAbsent: a lambda capturing u would be made per call
        if (view == null) {
            view = new Learned(u.named(job.name()), u.all);
            u.views.put(job.name(), view);
        }
        return view;
    }

    @Override
    public long version() {
        return observations;
    }

    @Override
    public void observe(JobSpec job, long runMs) {
        if (runMs <= 0) return;
        observations++;
        User u = user(job.user());
        u.named(job.name()).learn(runMs, observations);
        u.all.learn(runMs, observations);
        global.learn(runMs, observations);
    }

    private User user(String user) {
        return users.computeIfAbsent(user, k -> new User());   // a lambda that captures nothing: no allocation per call
    }

    /** One user's groups: all their jobs, and by job name; and the views of their jobs by name (those share one answer). */
    private static final class User {
        final History all = new History();
        final Map<String, History> byName = new HashMap<>();
        final Map<String, Learned> views = new HashMap<>();

        History named(String name) {
            return byName.computeIfAbsent(name, k -> new History());
        }
    }

    /** One group's recent run times, and the observation at which it last learned (0: never, and then it is empty). */
    private static final class History {
        final RecentRunTimes times = new RecentRunTimes(WINDOW);
        long learnedAt;

        void learn(long runMs, long observation) {
            times.add(runMs);
            learnedAt = observation;
        }
    }

    /** A job's own estimate: it never changes. */
    private record Estimate(long ms) implements Prediction {
        @Override public long version() { return 0; }
    }

    /**
     * The answer of the first non-empty group of name, user, everyone. Its version is the observation at which the
     * group it reads last learned: the answer changes only when that group learns or an earlier, empty one gets its
     * first run time, and either sets that group's mark to the newest observation, above every mark before.
     */
    private final class Learned implements Prediction {
        private final History byName, byUser;

        Learned(History byName, History byUser) {
            this.byName = byName;
            this.byUser = byUser;
        }

        private History read() {
            // a group has run times once it has learned (learnedAt > 0): the choice reads no run times
            return byName.learnedAt > 0 ? byName : byUser.learnedAt > 0 ? byUser : global;
        }

        @Override
        public long ms() {
            History r = read();
            return r.times.size() == 0 ? defaultMs : Math.max(1, r.times.median());
        }

        @Override
        public long version() {
            return read().learnedAt;
        }
    }
}
