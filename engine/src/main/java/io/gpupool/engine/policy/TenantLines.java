package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * fair-share's pending jobs kept across rounds, one list per tenant in arrival order, so that a round need not sort and
 * regroup the whole queue. The scheduler's changes ({@link QueueObserver}) are applied, in the order told, when the next
 * queue is built: a round's own starts and requeues do not change the lists under its walk.
 */
final class TenantLines {
    private final Comparator<JobState> arrival;
    private final Map<String, List<JobState>> byTenant = new HashMap<>();
    private final List<JobState> changed = new ArrayList<>();
    private final List<Boolean> added = new ArrayList<>();
    private int size;

    TenantLines(Comparator<JobState> arrival) {
        this.arrival = arrival;
    }

    void queued(JobState job) {
        changed.add(job);
        added.add(Boolean.TRUE);
    }

    void dequeued(JobState job) {
        changed.add(job);
        added.add(Boolean.FALSE);
    }

    /** Applies the changes told since the last call; then every tenant with a pending job has its line, in arrival order. */
    Map<String, List<JobState>> lines() {
        for (int i = 0; i < changed.size(); i++) {
            JobState j = changed.get(i);
            String tenant = j.spec().tenant();
            List<JobState> line = byTenant.computeIfAbsent(tenant, t -> new ArrayList<>());
            int at = Collections.binarySearch(line, j, arrival);
            if (added.get(i)) {
                line.add(at >= 0 ? at : -at - 1, j);
                size++;
            } else {
                if (at < 0 || line.get(at) != j) throw new IllegalStateException("job " + j.id() + " left a queue it was not in");
                line.remove(at);
                size--;
                if (line.isEmpty()) byTenant.remove(tenant);
            }
        }
        changed.clear();
        added.clear();
        return byTenant;
    }

    /** Pending jobs in all lines (after {@link #lines}). */
    int size() {
        return size;
    }
}
