package io.gpupool.store;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A standby's warm copy ({@link StoreFollower}) equals a full read of the store ({@link Store#recover}) after any run of
 * writes: submissions, starts with allocations and attempts, agents' reports, requeues with attempts left running, ends,
 * tokens, nodes, tenants, settings, and a new writer (a takeover) that numbers on from the stored changes. Each catch-up
 * reads only the jobs the writes touched.
 */
class StoreFollowerTest {
    @TempDir
    Path dir;
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : open.reversed()) c.close();
    }

    @Test
    void the_warm_copy_equals_a_full_read_on_sqlite() {
        followAndCompare(TestDatabases.sqliteUrl(dir));
    }

    @Test
    void the_warm_copy_equals_a_full_read_on_postgresql() {
        followAndCompare(TestDatabases.freshPostgresUrl());
    }

    @Test
    void changes_of_a_writer_that_does_not_number_them_are_read_all_back() throws Exception {
        String url = TestDatabases.sqliteUrl(dir);
        Database db = Database.open(url);
        open.add(db);
        Store store = new Store(db);
        store.writer().submit(new Write.InsertJob(new JobRow(1, "j1", "t0", "k1", "{}", "PENDING", 1, null, null, 0, null, null))).join();
        StoreFollower follower = new StoreFollower(db);
        follower.catchUp();
        // as a release before schema version 8 writes: no change_seq (the column's default, 0)
        try (var c = db.connection(); var st = c.createStatement()) {
            st.executeUpdate("INSERT INTO jobs (seq, id, tenant, idem_key, spec, state, submitted_ms, preemptions, attempt) "
                    + "VALUES (2, 'j2', 't0', 'k2', '{}', 'PENDING', 2, 0, 0)");
            st.executeUpdate("UPDATE jobs SET state = 'CANCELLED', ended_ms = 3 WHERE id = 'j1'");
        }
        follower.catchUp();
        assertThat(follower.state()).isEqualTo(store.recover());
        assertThat(follower.state().activeJobs()).extracting(JobRow::id).containsExactly("j2");
        store.writer().close();
    }

    /** A service's life in random rounds of writes; after each, the follower catches up and must equal the full read. */
    private void followAndCompare(String url) {
        Database writerDb = Database.open(url);
        Database standbyDb = Database.open(url);   // the standby's own pool, as on another machine
        open.add(standbyDb);
        open.add(writerDb);
        Store store = new Store(writerDb);
        StoreFollower follower = new StoreFollower(standbyDb);
        Random rnd = new Random(18);
        Map<String, JobRow> jobs = new LinkedHashMap<>();
        long seq = 0;
        long eventId = 0;
        long now = 1_000;
        int tokens = 0;
        for (int round = 0; round < 40; round++) {
            if (round == 5) follower.catchUp();   // a standby that starts late reads everything once
            if (round % 10 == 9) {
                // a takeover: a new writer (the store's pool stays), numbering on from the highest stored change
                store.writer().close();
                store = new Store(writerDb);
            }
            List<Write> writes = new ArrayList<>();
            Set<String> touched = new HashSet<>();
            for (int i = 0; i < 1 + rnd.nextInt(25); i++) {
                now += 10;
                int what = rnd.nextInt(10);
                List<JobRow> active = jobs.values().stream().filter(JobRow::active).toList();
                if (what < 3 || active.isEmpty()) {
                    seq++;
                    // now and then a task of one of three job arrays (its id says which: what the failed-task read groups by)
                    String id = rnd.nextInt(4) == 0 ? "j" + rnd.nextInt(3) + "_" + seq : "j" + seq;
                    JobRow j = new JobRow(seq, id, "t" + rnd.nextInt(3), rnd.nextBoolean() ? "k" + seq : null, "{}", "PENDING", now,
                            null, null, 0, null, null);
                    writes.add(new Write.InsertJob(j));
                    writes.add(new Write.InsertEvent(new EventRow(++eventId, j.id(), now, "SUBMITTED", null)));
                    jobs.put(j.id(), j);
                    touched.add(j.id());
                    continue;
                }
                JobRow j = active.get(rnd.nextInt(active.size()));
                String node = "n" + rnd.nextInt(3);
                JobRow next = null;
                if (what == 3 && j.state().equals("PENDING")) {
                    // an edit of a queued job (hold, priority): only its spec changes
                    next = j.withSpec("{\"edited\":" + now + "}");
                    writes.add(new Write.UpdateSpec(j.id(), next.spec()));
                } else if (what < 6 && j.state().equals("PENDING")) {
                    next = j.nextAttempt().withState("RUNNING", now, null, j.preemptions(), null, null);
                    writes.add(new Write.UpdateJob(next));
                    writes.add(new Write.SetAllocation(j.id(), List.of(new GrantRow(0, node, rnd.nextInt(8), 1000, 1024, true))));
                    writes.add(new Write.InsertAttempt(new AttemptRow(j.id(), next.attempt(), node, "[]", now, "ASSIGNED", null, null, null, null, null)));
                    writes.add(new Write.PutUsage(new UsageGrantRow(j.id(), next.attempt(), node, 0, j.tenant(), "u", "A100-80GB", 1000, 1024,
                            now, null, 0, 0, now)));
                } else if (what < 8 && j.state().equals("RUNNING")) {
                    // its agent reports the start: only the attempt changes
                    writes.add(new Write.UpdateAttempt(new AttemptUpdate(j.id(), j.attempt(), node, "RUNNING", 100L + seq, now, null, null, null)));
                } else if (what == 8 && j.state().equals("RUNNING")) {
                    // preempted: queued again, its attempt still running until its agent says otherwise
                    next = j.withState("PENDING", j.startedMs(), null, j.preemptions() + 1, null, null);
                    writes.add(new Write.UpdateJob(next));
                    writes.add(new Write.SetAllocation(j.id(), List.of()));
                    writes.add(new Write.UpdateAttempt(new AttemptUpdate(j.id(), j.attempt(), node, "STOPPING", null, null, null, null, null)));
                } else {
                    next = j.withState(rnd.nextBoolean() ? "SUCCEEDED" : "CANCELLED", j.startedMs(), now, j.preemptions(), 0, null);
                    if (j.attempt() > 0) {
                        // its grant's usage row closes
                        writes.add(new Write.PutUsage(new UsageGrantRow(j.id(), j.attempt(), node, 0, j.tenant(), "u", "A100-80GB", 1000, 1024,
                                j.startedMs(), now, 1, 2, now)));
                    }
                    writes.add(new Write.UpdateJob(next));
                    writes.add(new Write.SetAllocation(j.id(), List.of()));
                    if (j.attempt() > 0) {
                        writes.add(new Write.UpdateAttempt(new AttemptUpdate(j.id(), j.attempt(), node, "SUCCEEDED", null, null, now, 0, null)));
                    }
                }
                if (next != null) jobs.put(j.id(), next);
                touched.add(j.id());
            }
            // the small tables change too, now and then
            if (rnd.nextInt(3) == 0) writes.add(new Write.PutToken(new TokenRow("tok" + (++tokens), "h" + tokens, "member", "t0", null, now)));
            if (rnd.nextInt(5) == 0 && tokens > 0) writes.add(new Write.DeleteToken("tok" + (1 + rnd.nextInt(tokens))));
            if (rnd.nextInt(4) == 0) writes.add(new Write.PutNode(new NodeRow("n" + rnd.nextInt(3), "{}", "agent", rnd.nextBoolean(), now)));
            if (rnd.nextInt(4) == 0) writes.add(new Write.PutNodeProgress(new NodeProgress("n" + rnd.nextInt(3), round, round, 0)));
            if (rnd.nextInt(6) == 0) writes.add(new Write.PutTenant(new TenantRow("t" + rnd.nextInt(3), 1 + rnd.nextInt(3), 0, 0, now, false,
                    rnd.nextInt(3) * 600L, rnd.nextInt(3) * 3600L)));
            if (rnd.nextInt(6) == 0) writes.add(new Write.PutSetting("scheduler", "{\"round\":" + round + "}"));
            store.writer().submit(writes).join();
            if (round < 5) continue;
            follower.catchUp();
            if (round > 5) {
                assertThat(follower.lastChangedJobs()).as("round %d reads only the jobs it touched", round).isEqualTo(touched.size());
            }
            assertThat(follower.state()).as("round %d", round).isEqualTo(store.recover());
        }
        assertThat(follower.state().activeJobs()).as("the run leaves queued and running jobs to compare").hasSizeGreaterThan(5);
        assertThat(follower.state().unfinishedAttempts()).as("and queued jobs whose attempt may still run").isNotEmpty();
        assertThat(follower.state().openUsage()).as("and grants still metered").isNotEmpty();
        assertThat(follower.state().arraysWithFailures()).as("and an array with a cancelled task").isNotEmpty();
        store.writer().close();
    }
}
