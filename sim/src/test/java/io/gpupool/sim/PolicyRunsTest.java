package io.gpupool.sim;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PolicyRunsTest {
    private static final List<String> POLICIES = List.of("a", "b", "c", "d");

    @Test
    void resultsComeInTheGivenOrderWhateverFinishesFirst() {
        // the first policy finishes last: it waits until all the others have finished
        CountDownLatch othersDone = new CountDownLatch(POLICIES.size() - 1);
        List<String> results = PolicyRuns.run(POLICIES, 4, (label, f) -> {}, (i, progress) -> {
            if (i == 0) {
                await(othersDone);
            } else {
                othersDone.countDown();
            }
            return POLICIES.get(i).toUpperCase();
        });
        assertThat(results).containsExactly("A", "B", "C", "D");
    }

    @Test
    void theReplaysRunOnSeveralThreadsAtOnceOrOnTheCallerAlone() {
        Set<String> threads = ConcurrentHashMap.newKeySet();
        CountDownLatch allStarted = new CountDownLatch(POLICIES.size());
        PolicyRuns.run(POLICIES, 4, (label, f) -> {}, (i, progress) -> {
            threads.add(Thread.currentThread().getName());
            allStarted.countDown();
            await(allStarted);   // would never return if the four ran one after the other
            return i;
        });
        assertThat(threads).hasSize(4).doesNotContain(Thread.currentThread().getName());

        threads.clear();
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        PolicyRuns.run(POLICIES, 1, (label, f) -> {}, (i, progress) -> {
            threads.add(Thread.currentThread().getName());
            order.add(i);
            return i;
        });
        assertThat(threads).containsExactly(Thread.currentThread().getName());
        assertThat(order).containsExactly(0, 1, 2, 3);
    }

    @Test
    void aFailureNamesItsPolicyAndStopsTheOthers() {
        List<Integer> completed = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch failed = new CountDownLatch(1);
        assertThatThrownBy(() -> PolicyRuns.run(POLICIES, 4, (label, f) -> {}, (i, progress) -> {
            if (i == 2) {
                failed.countDown();
                throw new IllegalStateException("boom");
            }
            await(failed);
            // a long replay (10 s): a progress report soon after the failure must end it
            for (int done = 0; done < 10_000; done++) {
                progress.update(done, 10_000);
                sleep();
            }
            completed.add(i);
            return i;
        }))
                .isInstanceOf(PolicyRunException.class)
                .hasMessageContaining("policy 'c'")
                .hasMessageContaining("boom")
                .hasCauseInstanceOf(IllegalStateException.class);
        assertThat(completed).isEmpty();
    }

    @Test
    void sequentialFailureNamesItsPolicyAndRunsNoFurther() {
        List<Integer> ran = new ArrayList<>();
        assertThatThrownBy(() -> PolicyRuns.run(POLICIES, 1, (label, f) -> {}, (i, progress) -> {
            ran.add(i);
            if (i == 1) throw new ArithmeticException("/ by zero");
            return i;
        })).isInstanceOf(PolicyRunException.class).hasMessageContaining("policy 'b'");
        assertThat(ran).containsExactly(0, 1);
    }

    @Test
    void progressIsTheMeanOverAllReplaysAndNamesWhatRuns() {
        List<String> labels = new ArrayList<>();
        List<Double> fractions = new ArrayList<>();
        PolicyRuns.run(List.of("x", "y"), 1, (label, f) -> {
            labels.add(label);
            fractions.add(f);
        }, (i, progress) -> {
            progress.update(50, 100);
            return i;
        });
        // x starts, is half done, ends; then y
        assertThat(fractions).containsExactly(0.0, 0.25, 0.5, 0.5, 0.75, 1.0);
        assertThat(labels.get(1)).isEqualTo("x (0/2 done)");
        assertThat(labels.get(4)).isEqualTo("y (1/2 done)");
    }

    @Test
    void zeroThreadsIsRefused() {
        assertThatThrownBy(() -> PolicyRuns.run(POLICIES, 0, (label, f) -> {}, (i, progress) -> i))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static void sleep() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(20, TimeUnit.SECONDS)) throw new IllegalStateException("timed out");
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
