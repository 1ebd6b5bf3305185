package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.JobStatus;
import io.gpupool.engine.RoundResult;

import java.util.ArrayList;
import java.util.List;

/**
 * A settled scheduler: the last round started and preempted nothing, and since then only jobs arrived (every other
 * change unsettles it) with the cluster still at the version of that round. For a policy whose refusals do not
 * depend on time ({@code ARRIVALS_ONLY_WHEN_SETTLED}), the next round need only try the arrivals: every older job
 * would be refused again. A service with tens of thousands of queued jobs on a full pool then pays per round for
 * what arrived, not for the whole queue.
 */
final class SettledMemo {
    private boolean settled;
    private long settledVersion = -1;
    private final List<JobState> arrivals = new ArrayList<>();

    /** Anything but an arrival happened. */
    void unsettle() {
        settled = false;
    }

    void arrived(JobState job) {
        arrivals.add(job);
    }

    /** Whether only jobs arrived since a round that changed nothing, the cluster at {@code clusterVersion}. */
    boolean settledAt(long clusterVersion) {
        return settled && clusterVersion == settledVersion;
    }

    /** Whether any job arrived since the last round. */
    boolean anyArrival() {
        return !arrivals.isEmpty();
    }

    /** The jobs that arrived since the last round and still wait. */
    List<JobState> pendingArrivals() {
        return arrivals.stream().filter(j -> j.status() == JobStatus.PENDING).toList();
    }

    void roundEnded(RoundResult result, long clusterVersion) {
        arrivals.clear();
        settled = result.started().isEmpty() && result.preempted().isEmpty();
        settledVersion = clusterVersion;
    }
}
