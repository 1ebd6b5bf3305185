package io.gpupool.predict.runtime;

import io.gpupool.engine.policy.RuntimePredictor;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Teaches a predictor a job history in the order a live service would have seen it: jobs arrive by submit
 * time and are predicted then (fixing the features they are learned with), and each is observed when it
 * would have finished, submit + run time (queueing ignored). Optionally records the prediction each job got
 * at its arrival: the online error.
 */
public final class HistoryReplay {
    private HistoryReplay() {}

    /** Replays {@code jobs}; returns the prediction each job got when it arrived, in the order of {@code jobs}. */
    public static long[] replay(RuntimePredictor predictor, List<FinishedJob> jobs) {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < jobs.size(); i++) order.add(i);
        order.sort(Comparator.comparingLong((Integer i) -> jobs.get(i).spec().submitTimeMs()));
        PriorityQueue<Integer> running = new PriorityQueue<>(Comparator.comparingLong((Integer i) -> endMs(jobs.get(i))).thenComparing(i -> i));
        long[] predicted = new long[jobs.size()];
        for (int i : order) {
            FinishedJob j = jobs.get(i);
            while (!running.isEmpty() && endMs(jobs.get(running.peek())) <= j.spec().submitTimeMs()) {
                FinishedJob done = jobs.get(running.poll());
                predictor.observe(done.spec(), done.runMs());
            }
            predicted[i] = predictor.predictMs(j.spec());
            running.add(i);
        }
        while (!running.isEmpty()) {
            FinishedJob done = jobs.get(running.poll());
            predictor.observe(done.spec(), done.runMs());
        }
        return predicted;
    }

    private static long endMs(FinishedJob j) {
        return j.spec().submitTimeMs() + j.runMs();
    }
}
