package io.gpupool.engine;

import io.gpupool.engine.policy.JobQueue;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.gpupool.engine.TestPools.job;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A keyed queue (qssf's order), and a queue given its jobs in order (themis'), poll exactly as sorting by the key
 * (ascending or descending, by {@code Double.compare}) then arrival would: over random queues with tied keys, signed
 * zeros and NaN, with jobs requeued mid-walk (preemption victims come back and are polled in order).
 */
class KeyedQueueTest {
    @Test
    void pollsInTheOrderOfSortingByKeyThenArrival() {
        double[] odd = {0.0, -0.0, Double.NaN, Double.POSITIVE_INFINITY, 1.5};
        for (long seed = 1; seed <= 300; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            boolean descending = rnd.nextBoolean();
            JobState.RoundNote note = new JobState.RoundNote();
            Map<JobState, Double> key = new IdentityHashMap<>();
            List<JobState> queued = new ArrayList<>();
            List<Long> seqs = new ArrayList<>();
            int n = rnd.nextInt(0, 80);
            for (long s = 0; s < n + 20; s++) seqs.add(s);
            Collections.shuffle(seqs, new java.util.Random(seed));   // arrival order unrelated to the collection's
            List<JobState> spare = new ArrayList<>();
            for (int i = 0; i < n + 20; i++) {
                JobState j = new JobState(job("j" + i, 1).build(), seqs.get(i), 0, note);
                key.put(j, rnd.nextInt(6) == 0 ? odd[rnd.nextInt(odd.length)] : (double) rnd.nextInt(5));
                (i < n ? queued : spare).add(j);
            }
            Comparator<JobState> byKey = (a, b) -> descending ? Double.compare(key.get(b), key.get(a)) : Double.compare(key.get(a), key.get(b));
            Comparator<JobState> order = byKey.thenComparingLong(JobState::seq);
            // the keyed queue, or a queue handed its jobs already in order (themis' sorted from its last round's)
            JobQueue q = rnd.nextBoolean() ? JobQueue.byKey(queued, key::get, descending)
                    : JobQueue.inOrder(queued.stream().sorted(order).toArray(JobState[]::new), n, byKey);
            List<JobState> left = new ArrayList<>(queued);
            for (int step = 0; step < n + 20; step++) {
                if (!spare.isEmpty() && rnd.nextInt(4) == 0) {
                    JobState back = spare.removeLast();
                    q.requeue(back);
                    left.add(back);
                }
                left.sort(order);
                JobState polled = q.poll();
                if (left.isEmpty()) {
                    assertThat(polled).isNull();
                    break;
                }
                assertThat(polled).as("seed %d step %d", seed, step).isSameAs(left.removeFirst());
            }
        }
    }
}
