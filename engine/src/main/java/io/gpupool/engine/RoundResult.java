package io.gpupool.engine;

import java.util.List;

/** What one scheduling round did: jobs started and jobs preempted (back in the queue), in order. */
public record RoundResult(List<String> started, List<String> preempted) {
    public RoundResult {
        started = List.copyOf(started);
        preempted = List.copyOf(preempted);
    }

    public boolean changedAnything() {
        return !started.isEmpty() || !preempted.isEmpty();
    }
}
