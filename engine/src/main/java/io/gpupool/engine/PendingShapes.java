package io.gpupool.engine;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The shapes ({@link JobState#shapeKey}) of the pending jobs, each with how many pending jobs have it, and how many
 * pending jobs run in an advance reservation: a round may stop walking its queue once every shape still queued has
 * been refused and no queued job has a reservation of its own (its refusal is per job). Kept at every job entering and
 * leaving the queue, so a round reads it in O(shapes).
 */
final class PendingShapes {
    private final Map<String, int[]> counts = new HashMap<>();
    private final Set<String> shapes = Collections.unmodifiableSet(counts.keySet());
    private int inReservation;

    void add(JobState job) {
        counts.computeIfAbsent(job.shapeKey(), k -> new int[1])[0]++;
        if (job.reservation != null) inReservation++;
    }

    void remove(JobState job) {
        int[] n = counts.get(job.shapeKey());
        if (n == null) throw new IllegalStateException("job " + job.id() + " of shape " + job.shapeKey() + " is not counted as pending");
        if (--n[0] == 0) counts.remove(job.shapeKey());
        if (job.reservation != null) inReservation--;
    }

    /** The shapes at least one pending job has (a view). */
    Set<String> shapes() {
        return shapes;
    }

    /** Pending jobs that run in an advance reservation (their own refusal before its window). */
    int inReservation() {
        return inReservation;
    }
}
