package io.gpupool.store;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/** The same storage behaviour on every database: subclasses pick SQLite or PostgreSQL. */
abstract class StoreContractTest {
    private Store store;

    protected abstract String jdbcUrl();

    @BeforeEach
    void open() {
        store = new Store(Database.open(jdbcUrl()));
    }

    @AfterEach
    void close() {
        if (store != null) store.close();
    }

    private static JobRow job(long seq, String tenant, String key) {
        return new JobRow(seq, "j" + seq, tenant, key, "{\"numGpus\":1}", "PENDING", 1000 + seq, null, null, 0, null, null);
    }

    private void commit(Write... writes) {
        store.writer().submit(List.of(writes)).join();
    }

    @Test
    void a_restart_reads_back_active_jobs_their_grants_and_idempotency_keys() {
        JobRow a = job(1, "t1", "k1");
        JobRow b = job(2, "t2", null);
        JobRow c = job(3, "t1", "k2");
        commit(new Write.InsertJob(a), new Write.InsertJob(b), new Write.InsertJob(c),
                new Write.UpdateJob(b.withState("RUNNING", 2000L, null, 0, null, null)),
                new Write.SetAllocation("j2", List.of(new GrantRow(0, "n1", 0, 1000, 81920, true), new GrantRow(0, "n1", 1, 1000, 81920, true))),
                new Write.UpdateJob(c.withState("CANCELLED", null, 3000L, 0, null, "cancelled by t1")),
                new Write.InsertEvent(new EventRow(7, "j1", 1001, "SUBMITTED", null)));
        store.close();
        store = new Store(Database.open(jdbcUrl()));

        RecoveredState r = store.recover();
        assertThat(r.activeJobs()).extracting(JobRow::id, JobRow::state).containsExactly(
                org.assertj.core.groups.Tuple.tuple("j1", "PENDING"), org.assertj.core.groups.Tuple.tuple("j2", "RUNNING"));
        assertThat(r.allocations().get("j2")).extracting(GrantRow::gpu).containsExactly(0, 1);
        assertThat(r.idempotency()).containsEntry("t1\nk1", "j1").containsEntry("t1\nk2", "j3").hasSize(2);
        assertThat(r.nextSeq()).isEqualTo(4);
        assertThat(r.nextEventId()).isEqualTo(8);
        assertThat(store.job("j3")).get().extracting(JobRow::state, JobRow::endedMs).containsExactly("CANCELLED", 3000L);
    }

    @Test
    void within_one_batch_the_last_state_and_allocation_of_a_job_win() {
        JobRow a = job(1, "t1", null);
        commit(new Write.InsertJob(a),
                new Write.UpdateJob(a.withState("RUNNING", 10L, null, 0, null, null)),
                new Write.SetAllocation("j1", List.of(new GrantRow(0, "n1", 0, 500, 1000, false))),
                new Write.UpdateJob(a.withState("PENDING", 10L, null, 1, null, null)),
                new Write.SetAllocation("j1", List.of()),
                new Write.UpdateJob(a.withState("RUNNING", 20L, null, 1, null, null)),
                new Write.SetAllocation("j1", List.of(new GrantRow(0, "n2", 3, 500, 1000, false))));
        assertThat(store.job("j1")).get().extracting(JobRow::state, JobRow::startedMs, JobRow::preemptions).containsExactly("RUNNING", 20L, 1);
        assertThat(store.allocation("j1")).containsExactly(new GrantRow(0, "n2", 3, 500, 1000, false));
    }

    @Test
    void jobs_are_listed_by_tenant_and_state_in_pages() {
        List<Write> w = new ArrayList<>();
        for (int i = 1; i <= 25; i++) w.add(new Write.InsertJob(job(i, i % 2 == 0 ? "even" : "odd", null)));
        commit(w.toArray(Write[]::new));
        commit(new Write.UpdateJob(job(4, "even", null).withState("SUCCEEDED", 1L, 2L, 0, 0, null)));

        List<JobRow> page1 = store.jobs(new JobQuery("even", Set.of(), null, null, 0, 5));
        assertThat(page1).extracting(JobRow::seq).containsExactly(2L, 4L, 6L, 8L, 10L);
        List<JobRow> page2 = store.jobs(new JobQuery("even", Set.of(), null, null, page1.getLast().seq(), 5));
        assertThat(page2).extracting(JobRow::seq).containsExactly(12L, 14L, 16L, 18L, 20L);
        assertThat(store.jobs(new JobQuery(null, Set.of("SUCCEEDED"), null, null, 0, 100))).extracting(JobRow::id).containsExactly("j4");
        assertThat(store.jobs(new JobQuery(null, Set.of(), 1010L, 1013L, 0, 100))).extracting(JobRow::seq).containsExactly(10L, 11L, 12L);
        assertThat(store.countByState()).containsEntry("PENDING", 24L).containsEntry("SUCCEEDED", 1L);
    }

    @Test
    void tenants_tokens_nodes_and_settings_are_upserted() {
        commit(new Write.PutTenant(new TenantRow("t1", 1, 0, 0, 5)), new Write.PutTenant(new TenantRow("t1", 3, 2, 8, 9)),
                new Write.PutToken(new TokenRow("tok1", "ab".repeat(32), "member", "t1", "ci", 5)),
                new Write.PutNode(new NodeRow("n1", "{}", "static", false, 5)), new Write.PutNode(new NodeRow("n1", "{}", "static", true, 5)),
                new Write.PutSetting("scheduler", "{\"policy\":\"fcfs\"}"), new Write.PutSetting("scheduler", "{\"policy\":\"las\"}"));
        RecoveredState r = store.recover();
        assertThat(r.tenants()).containsExactly(new TenantRow("t1", 3, 2, 8, 5));
        assertThat(r.tokens()).singleElement().extracting(TokenRow::tenant, TokenRow::role).containsExactly("t1", "member");
        assertThat(r.nodes()).singleElement().extracting(NodeRow::cordoned).isEqualTo(true);
        assertThat(r.settings()).containsEntry("scheduler", "{\"policy\":\"las\"}");
    }

    @Test
    void concurrent_submitters_are_group_committed_and_all_durable() {
        int n = 2000;
        List<CompletableFuture<Void>> done = IntStream.rangeClosed(1, n).parallel()
                .mapToObj(i -> store.writer().submit(List.of(new Write.InsertJob(job(i, "t" + (i % 4), "key" + i)),
                        new Write.InsertEvent(new EventRow(i, "j" + i, i, "SUBMITTED", null)))))
                .toList();
        CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).join();
        assertThat(store.writer().commits()).isLessThan(n);
        store.close();
        store = new Store(Database.open(jdbcUrl()));
        assertThat(store.recover().activeJobs()).hasSize(n);
        assertThat(store.events("j77")).singleElement().extracting(EventRow::type).isEqualTo("SUBMITTED");
    }

    @Test
    void logs_are_paged_by_id() {
        commit(new Write.InsertJob(job(1, "t", null)), new Write.AppendLog(new LogRow(1, "j1", 1, "a")),
                new Write.AppendLog(new LogRow(2, "j1", 2, "b")), new Write.AppendLog(new LogRow(3, "j1", 3, "c")));
        assertThat(store.logs("j1", 1, 10)).extracting(LogRow::line).containsExactly("b", "c");
        assertThat(store.logs("j1", 0, 1)).extracting(LogRow::line).containsExactly("a");
    }

    @Test
    void a_saved_run_time_predictor_is_replaced_per_kind_and_read_back_after_a_restart() {
        assertThat(store.predictor("history")).isEmpty();
        String big = "A".repeat(300_000);   // a predictor that learned a lot: far beyond a VARCHAR
        commit(new Write.PutPredictor(new PredictorRow("history", "old", 3, 1000)),
                new Write.PutPredictor(new PredictorRow("gbt", "trees", 5, 1500)));
        commit(new Write.PutPredictor(new PredictorRow("history", big, 4, 2000)));
        store.close();
        store = new Store(Database.open(jdbcUrl()));
        assertThat(store.predictor("history")).contains(new PredictorRow("history", big, 4, 2000));
        assertThat(store.predictor("gbt")).contains(new PredictorRow("gbt", "trees", 5, 1500));
    }
}
