package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * srtf-oracle's running jobs kept across rounds in its victim order: longest remaining time first, then arrival. A
 * running job's remaining time at t is max(0, finish - t), where finish = true run time - attained before this run +
 * run start is fixed while it runs: all remaining times fall at the same rate, so latest finish first is the victim
 * order at any time, except that the jobs whose finish has passed all have 0 left and go by arrival among themselves
 * (at the end).
 */
final class RunningByFinish {
    private record Entry(JobState job, long finishMs) {}

    private static final Comparator<Entry> LATEST_FINISH_FIRST = (a, b) -> {   // one comparison, no boxing
        int c = Long.compare(b.finishMs, a.finishMs);
        return c != 0 ? c : Long.compare(a.job.seq(), b.job.seq());
    };

    private final Map<JobState, Entry> entries = new IdentityHashMap<>();
    private final List<JobState> unkeyed = new ArrayList<>();   // started since the last query: finish not read yet
    private final SortedRunning<Entry> byFinish = new SortedRunning<>(LATEST_FINISH_FIRST, Entry::job);
    private List<JobState> orderedJobs;   // byFinish's jobs, null when it changed since

    void started(JobState job) {
        unkeyed.add(job);
    }

    void ended(JobState job) {
        Entry e = entries.remove(job);
        if (e == null) {
            unkeyed.remove(job);
            return;
        }
        byFinish.remove(e);
        orderedJobs = null;
    }

    /** Every running job in srtf-oracle's victim order at the context's time (the caller does not change the list). */
    List<JobState> inVictimOrder(PolicyContext ctx) {
        for (JobState j : unkeyed) {
            Entry e = new Entry(j, finishMs(ctx, j));
            entries.put(j, e);
            byFinish.add(e);
            orderedJobs = null;
        }
        unkeyed.clear();
        if (orderedJobs == null) orderedJobs = Arrays.asList(byFinish.jobs());
        long now = ctx.nowMs();
        int done = byFinish.size();   // the jobs from here on have no time left
        while (done > 0 && byFinish.get(done - 1).finishMs <= now) done--;
        if (byFinish.size() - done <= 1) return orderedJobs;
        JobState[] jobs = orderedJobs.toArray(new JobState[0]);
        Arrays.sort(jobs, done, jobs.length, Comparator.comparingLong(JobState::seq));
        return Arrays.asList(jobs);
    }

    private static long finishMs(PolicyContext ctx, JobState j) {
        if (ctx.oracle() == null) SrtfOraclePolicy.remainingMs(ctx, j);   // throws, naming what is missing
        return j.trueRuntimeMs(ctx.oracle()) - j.attainedMs(j.runStartMs()) + j.runStartMs();
    }
}
