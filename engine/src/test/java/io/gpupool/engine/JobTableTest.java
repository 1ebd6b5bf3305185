package io.gpupool.engine;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.gpupool.engine.TestPools.job;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The scheduler's job table keeps the jobs exactly as the {@code LinkedHashMap<String, JobState>} it replaced: the
 * same jobs in the same order (a job put again under its id keeps its place, a removed and re-added one goes to
 * the end), through random histories long enough to compact the array many times; and its copies are that order.
 */
class JobTableTest {
    @Test
    void sameJobsInTheSameOrderAsALinkedHashMap() {
        for (long seed = 1; seed <= 20; seed++) {
            SplittableRandom rnd = new SplittableRandom(seed);
            JobState.RoundNote note = new JobState.RoundNote();
            Map<String, JobState> model = new LinkedHashMap<>();
            JobTable table = new JobTable();
            List<String> ids = new ArrayList<>();
            java.util.Set<String> known = new java.util.HashSet<>();
            int bias = rnd.nextInt(2, 6);   // some histories grow long queues, others stay short
            for (int step = 0; step < 3000; step++) {
                int op = rnd.nextInt(10);
                if (op < bias || ids.isEmpty()) {
                    // a new job, or one removed earlier coming back (a requeued job: to the end)
                    String id = !ids.isEmpty() && rnd.nextInt(5) == 0 ? ids.get(rnd.nextInt(ids.size())) : "j" + step;
                    if (model.containsKey(id)) id = "j" + step;
                    JobState j = new JobState(job(id, 1).build(), step, 0, note);
                    model.put(id, j);
                    table.put(j);
                    if (known.add(id)) ids.add(id);
                } else if (op < 8) {
                    String id = ids.get(rnd.nextInt(ids.size()));
                    model.remove(id);
                    table.remove(id);   // also ids no longer present: nothing happens
                } else {
                    // a job replaced under its id (replacePending): the new state in the old place
                    List<String> present = new ArrayList<>(model.keySet());
                    if (present.isEmpty()) continue;
                    String id = present.get(rnd.nextInt(present.size()));
                    JobState j = new JobState(job(id, 2).build(), step, 0, note);
                    model.put(id, j);
                    table.put(j);
                }
                assertThat(table.values()).hasSize(model.size());
                assertThat(table.isEmpty()).isEqualTo(model.isEmpty());
                if (step % 29 == 0 || model.size() < 3) {
                    List<JobState> expected = new ArrayList<>(model.values());
                    assertThat(table.values()).containsExactlyElementsOf(expected);   // by identity of order and element
                    assertThat(table.values().toArray(new JobState[0])).containsExactly(expected.toArray(new JobState[0]));
                    JobState[] big = new JobState[expected.size() + 2];
                    Arrays.fill(big, new JobState(job("sentinel", 1).build(), -1, 0, note));   // toArray marks the end with null
                    JobState[] into = table.values().toArray(big);
                    assertThat(into).isSameAs(big);
                    assertThat(Arrays.copyOf(into, expected.size())).containsExactly(expected.toArray(new JobState[0]));
                    assertThat(into[expected.size()]).isNull();
                    assertThat(table.values().toArray()).containsExactly(expected.toArray());
                }
            }
        }
    }

    @Test
    void anIterationFailsFastWhenTheTableChangesUnderIt() {
        JobState.RoundNote note = new JobState.RoundNote();
        JobTable table = new JobTable();
        for (int i = 0; i < 3; i++) table.put(new JobState(job("j" + i, 1).build(), i, 0, note));
        Iterator<JobState> it = table.values().iterator();
        it.next();
        table.remove("j1");
        assertThatThrownBy(it::next).isInstanceOf(ConcurrentModificationException.class);
    }
}
