package io.gpupool.engine;

import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Status;

import java.util.HashMap;
import java.util.Map;

/**
 * Groups of jobs that may run only so many at once (a job array's {@code %N}). A rule every round applies
 * before placement, whatever the policy, like a tenant's hard limit: a job of a group already at its cap waits
 * and never blocks the jobs behind it. Counts move at every start and stop, so a check is O(1).
 */
final class ConcurrencyCaps {
    /** The plugin name of the refusal. */
    static final String PLUGIN = "array-cap";

    private static final class Group {
        int cap;
        int running;
        int members;
    }

    private final Map<String, Group> groups = new HashMap<>();

    void join(JobState job, String group, int cap) {
        if (cap < 1) throw new IllegalArgumentException("cap of group " + group + " must be at least 1, got " + cap);
        if (job.capGroup != null) leave(job);
        Group g = groups.computeIfAbsent(group, k -> new Group());
        g.cap = cap;
        g.members++;
        job.capGroup = group;
        if (job.status == JobStatus.RUNNING) g.running++;
    }

    /** The job no longer counts (it was forgotten). */
    void leave(JobState job) {
        Group g = groups.get(job.capGroup);
        if (g == null) return;
        if (job.status == JobStatus.RUNNING) g.running--;
        if (--g.members == 0) groups.remove(job.capGroup);
        job.capGroup = null;
    }

    void started(JobState job) {
        if (job.capGroup != null) groups.get(job.capGroup).running++;
    }

    void stopped(JobState job) {
        if (job.capGroup != null) groups.get(job.capGroup).running--;
    }

    /** Why the job may not start now, or null. */
    Status refusal(JobState job) {
        if (job.capGroup == null) return null;
        Group g = groups.get(job.capGroup);
        if (g.running < g.cap) return null;
        return Status.insufficient(PLUGIN, Resource.NONE, 1, 0, g.cap,
                "array " + job.capGroup + " already runs " + g.running + " of its at most " + g.cap + " tasks at once");
    }

    /** No group exists: no job is ever refused for its group. */
    boolean none() {
        return groups.isEmpty();
    }

    int cap(String group) {
        return groups.get(group).cap;
    }

    /** Running jobs of the group (tests, views). */
    int running(String group) {
        Group g = groups.get(group);
        return g == null ? 0 : g.running;
    }
}
