package io.gpupool.predict.runtime;

import io.gpupool.engine.policy.RecentRunTimes;
import io.gpupool.model.JobSpec;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Robust medians of similar past jobs: the median run time of the most specific {@link HistoryLevel} group of
 * the job that has enough runs (same user and name, same user and name template, ... same GPU count), else of
 * all jobs, else a default. Medians ignore the few runs that crash at once or hang for days. Every group keeps
 * its latest {@value #WINDOW} runs, so predictions follow a user whose jobs change; all jobs together keep
 * {@value #GLOBAL_WINDOW}. At most {@value #MAX_GROUPS} groups are kept, the least recently used dropped.
 *
 * <p>The engine's default {@code HistoryMedianPredictor} is the same idea with three levels and no
 * persistence; this one adds name templates, tenants and GPU counts and survives restarts.
 */
public final class HistoryPredictor implements PersistentPredictor {
    static final String KIND = "history";
    public static final int WINDOW = 64;
    public static final int GLOBAL_WINDOW = 1024;
    /** Jobs whose groups are remembered between prediction and completion (submitted, not yet finished). */
    static final int PENDING_CACHE = 200_000;
    /** Groups kept; the least recently used go first (every distinct job name makes one). */
    static final int MAX_GROUPS = 200_000;

    /** A prediction and where it came from: the index of the level in {@link #levels()}, that size for all jobs, -1 for the default. */
    public record Answer(long ms, int level) {}

    private final List<HistoryLevel> levels;
    private final long defaultMs;
    private final Map<String, RecentRunTimes> groups = new LinkedHashMap<>(1024, 0.75f, true) {
        @Override protected boolean removeEldestEntry(Map.Entry<String, RecentRunTimes> e) {
            return size() > MAX_GROUPS;
        }
    };
    private final RecentRunTimes global = new RecentRunTimes(GLOBAL_WINDOW);
    /** job id -> its groups, one per level (null where a level does not apply); saves recomputing keys every round. */
    private final Map<String, RecentRunTimes[]> chains = new LinkedHashMap<>(1024, 0.75f, true) {
        @Override protected boolean removeEldestEntry(Map.Entry<String, RecentRunTimes[]> e) {
            return size() > PENDING_CACHE;
        }
    };

    public HistoryPredictor(Set<HistoryLevel> levels, long defaultMs) {
        if (defaultMs <= 0) throw new IllegalArgumentException("defaultMs must be > 0");
        this.levels = List.copyOf(levels.isEmpty() ? EnumSet.noneOf(HistoryLevel.class) : EnumSet.copyOf(levels));
        this.defaultMs = defaultMs;
    }

    /** Every level. */
    public static HistoryPredictor standard(long defaultMs) {
        return new HistoryPredictor(EnumSet.allOf(HistoryLevel.class), defaultMs);
    }

    /** The baseline: the median of all recent jobs, whatever the job. */
    public static HistoryPredictor globalMedian(long defaultMs) {
        return new HistoryPredictor(EnumSet.noneOf(HistoryLevel.class), defaultMs);
    }

    @Override public String name() {
        return levels.isEmpty() ? "global-median" : KIND;
    }

    public List<HistoryLevel> levels() {
        return levels;
    }

    @Override
    public long predictMs(JobSpec job) {
        return answer(job).ms();
    }

    public Answer answer(JobSpec job) {
        RecentRunTimes[] chain = chains.computeIfAbsent(job.id(), id -> chainOf(JobFeatures.of(job)));
        for (int i = 0; i < chain.length; i++) {
            RecentRunTimes r = chain[i];
            if (r != null && r.size() >= levels.get(i).minRuns()) return new Answer(Math.max(1, r.median()), i);
        }
        return global.size() > 0 ? new Answer(Math.max(1, global.median()), levels.size()) : new Answer(defaultMs, -1);
    }

    @Override
    public void observe(JobSpec job, long runMs) {
        if (runMs <= 0) return;
        RecentRunTimes[] chain = chains.remove(job.id());
        if (chain == null) chain = chainOf(JobFeatures.of(job));
        for (RecentRunTimes r : chain) if (r != null) r.add(runMs);
        global.add(runMs);
    }

    private RecentRunTimes[] chainOf(JobFeatures f) {
        RecentRunTimes[] chain = new RecentRunTimes[levels.size()];
        for (int i = 0; i < chain.length; i++) {
            String key = levels.get(i).key(f);
            if (key != null) chain[i] = groups.computeIfAbsent(key, k -> new RecentRunTimes(WINDOW));
        }
        return chain;
    }

    // ---- persistence ------------------------------------------------------------------------------

    @Override
    public void writeState(DataOutputStream out) throws IOException {
        out.writeLong(defaultMs);
        out.writeInt(levels.size());
        for (HistoryLevel l : levels) Predictors.writeString(out, l.name());
        writeRuns(out, global);
        List<Map.Entry<String, RecentRunTimes>> kept = new ArrayList<>();
        for (Map.Entry<String, RecentRunTimes> e : groups.entrySet()) if (e.getValue().size() > 0) kept.add(e);
        out.writeInt(kept.size());
        for (Map.Entry<String, RecentRunTimes> e : kept) {
            Predictors.writeString(out, e.getKey());
            writeRuns(out, e.getValue());
        }
    }

    static HistoryPredictor readState(DataInputStream in) throws IOException {
        long defaultMs = in.readLong();
        int n = Predictors.readCount(in, HistoryLevel.values().length, "history levels");
        Set<HistoryLevel> levels = EnumSet.noneOf(HistoryLevel.class);
        for (int i = 0; i < n; i++) levels.add(Predictors.readEnum(in, HistoryLevel.class));
        HistoryPredictor p = new HistoryPredictor(levels, Math.max(1, defaultMs));
        readRuns(in, p.global);
        int groups = Predictors.readCount(in, Integer.MAX_VALUE, "history groups");
        for (int i = 0; i < groups; i++) {
            RecentRunTimes r = new RecentRunTimes(WINDOW);
            p.groups.put(Predictors.readString(in), r);
            readRuns(in, r);
        }
        return p;
    }

    private static void writeRuns(DataOutputStream out, RecentRunTimes r) throws IOException {
        long[] v = r.oldestFirst();
        out.writeInt(v.length);
        for (long x : v) out.writeLong(x);
    }

    private static void readRuns(DataInputStream in, RecentRunTimes into) throws IOException {
        int n = Predictors.readCount(in, GLOBAL_WINDOW, "runs of a group");
        for (int i = 0; i < n; i++) into.add(in.readLong());
    }
}
