package io.gpupool.store;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
    void an_arrays_tasks_are_counted_per_state_and_listed_in_order_and_a_spec_is_replaced() {
        List<Write> w = new ArrayList<>();
        w.add(new Write.InsertJob(job(1, "t", null)));   // a job of its own, not in the array
        for (int i = 0; i < 5; i++) {
            w.add(new Write.InsertJob(new JobRow(2 + i, "j2_" + i * 3, "t", null, "{}", "PENDING", 5, null, null, 0, null, null)));
        }
        w.add(new Write.UpdateSpec("j2_3", "{\"held\":true}"));
        commit(w.toArray(Write[]::new));
        JobRow t0 = store.job("j2_0").orElseThrow();
        commit(new Write.UpdateJob(t0.withState("SUCCEEDED", 6L, 7L, 0, 0, null)));

        assertThat(store.arrayStates("j2")).containsExactly(Map.entry("PENDING", 4L), Map.entry("SUCCEEDED", 1L));
        assertThat(store.arrayStates("j1")).isEmpty();
        assertThat(store.arrayTasks("j2", 0, 3)).extracting(JobRow::id).containsExactly("j2_0", "j2_3", "j2_6");
        assertThat(store.arrayTasks("j2", 4, 10)).extracting(JobRow::id).containsExactly("j2_9", "j2_12");
        assertThat(store.job("j2_3")).get().extracting(JobRow::spec).isEqualTo("{\"held\":true}");
        assertThat(store.job("j1")).get().extracting(JobRow::arrayId).isNull();
        assertThat(store.recover().arraysWithFailures()).isEmpty();
        commit(new Write.UpdateJob(store.job("j2_3").orElseThrow().withState("FAILED", 6L, 8L, 0, 1, null)));
        assertThat(store.recover().arraysWithFailures()).containsExactly("j2");
    }

    @Test
    void a_tenants_time_limits_are_stored_and_updated() {
        commit(new Write.PutTenant(new TenantRow("t1", 1, 0, 0, 5, false, 3600, 86_400)));
        assertThat(store.recover().tenants()).containsExactly(new TenantRow("t1", 1, 0, 0, 5, false, 3600, 86_400));
        commit(new Write.PutTenant(new TenantRow("t1", 1, 0, 0, 5, true, 0, 7200)));
        assertThat(store.recover().tenants()).containsExactly(new TenantRow("t1", 1, 0, 0, 5, true, 0, 7200));
    }

    @Test
    void reservations_are_stored_read_back_in_order_and_deleted() {
        ReservationRow a = new ReservationRow("big", "t1", 1000, 2000, "[{\"node\":\"n0\",\"gpu\":0}]", "A100-80GB", "[]", 5, "admin token x");
        ReservationRow b = new ReservationRow("nodes", "t2", 3000, 4000, "[{\"node\":\"n1\",\"gpu\":1}]", null, "[\"n1\"]", 6, "admin token x");
        commit(new Write.PutReservation(a), new Write.PutReservation(b));
        assertThat(store.recover().reservations()).containsExactly(a, b);
        commit(new Write.DeleteReservation("big"));
        assertThat(store.recover().reservations()).containsExactly(b);
    }

    @Test
    void tenants_tokens_nodes_and_settings_are_upserted() {
        commit(new Write.PutTenant(new TenantRow("t1", 1, 0, 0, 5)), new Write.PutTenant(new TenantRow("t1", 3, 2, 8, 9)),
                new Write.PutToken(new TokenRow("tok1", "ab".repeat(32), "member", "t1", "ci", 5, null, "alice")),
                new Write.PutNode(new NodeRow("n1", "{}", "static", false, 5)), new Write.PutNode(new NodeRow("n1", "{}", "static", true, 5)),
                new Write.PutSetting("scheduler", "{\"policy\":\"fcfs\"}"), new Write.PutSetting("scheduler", "{\"policy\":\"las\"}"));
        RecoveredState r = store.recover();
        assertThat(r.tenants()).containsExactly(new TenantRow("t1", 3, 2, 8, 5));
        assertThat(r.tokens()).singleElement().extracting(TokenRow::tenant, TokenRow::role, TokenRow::unixUser)
                .containsExactly("t1", "member", "alice");
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
    void output_chunks_are_read_back_contiguously_from_any_offset() {
        byte[] a = "hello ".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] b = "world\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        commit(new Write.InsertJob(job(1, "t", null)), new Write.AppendOutput(new OutputChunk("j1", 1, "n1", "stdout", 0, a, false, 5)),
                new Write.AppendOutput(new OutputChunk("j1", 1, "n1", "stdout", a.length, b, true, 6)),
                new Write.AppendOutput(new OutputChunk("j1", 1, "n1", "stdout", 0, a, false, 7))); // a resent chunk changes nothing
        OutputSlice all = store.output("j1", 1, "n1", "stdout", 0, 1 << 20);
        assertThat(new String(all.data(), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("hello world\n");
        assertThat(all.length()).isEqualTo(12);
        assertThat(all.complete()).isTrue();
        OutputSlice tail = store.output("j1", 1, "n1", "stdout", 3, 5);
        assertThat(new String(tail.data(), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("lo wo");
        assertThat(store.outputLength("j1", 1, "n1", "stderr")).isZero();
        assertThat(store.output("j1", 2, "n1", "stdout", 0, 100).data()).isEmpty();
    }

    @Test
    void an_attempt_update_naming_another_jobs_submit_instant_changes_nothing() {
        // j1 was submitted at 1001; an agent reports about attempt 1 of an earlier j1 (submitted at 500, before a restore)
        commit(new Write.InsertJob(job(1, "t", null)),
                new Write.InsertAttempt(new AttemptRow("j1", 1, "n1", "[]", 10, "ASSIGNED", null, null, null, null, null)));
        commit(new Write.UpdateAttempt(new AttemptUpdate("j1", 1, "n1", "RUNNING", 99L, 5L, null, null, "started", 500L)),
                new Write.UpdateAttempt(new AttemptUpdate("j1", 1, "n1", "FAILED", null, 5L, 6L, 7, "exit code 7", 500L)));
        assertThat(store.attempts("j1")).singleElement().satisfies(a -> {
            assertThat(a.state()).isEqualTo("ASSIGNED");
            assertThat(a.pid()).isNull();
        });
        assertThat(store.attemptExists("j1", 1, "n1", 500L)).isFalse();
        assertThat(store.attemptExists("j1", 1, "n1", 1001L)).isTrue();
        assertThat(store.attemptExists("j1", 1, "n1", null)).isTrue();
        // its own reports, and those that name no instant (an older agent), apply
        commit(new Write.UpdateAttempt(new AttemptUpdate("j1", 1, "n1", "RUNNING", 42L, 11L, null, null, "started", 1001L)),
                new Write.UpdateAttempt(new AttemptUpdate("j1", 1, "n1", "SUCCEEDED", null, null, 20L, 0, "exit code 0")));
        assertThat(store.attempts("j1")).singleElement().satisfies(a -> {
            assertThat(a.state()).isEqualTo("SUCCEEDED");
            assertThat(a.pid()).isEqualTo(42L);
            assertThat(a.exitCode()).isZero();
        });
    }

    @Test
    void attempts_keep_the_agents_report_and_a_late_start_never_reopens_an_end() {
        commit(new Write.InsertJob(job(1, "t", null)),
                new Write.InsertAttempt(new AttemptRow("j1", 1, "n1", "[]", 10, "ASSIGNED", null, null, null, null, null)),
                new Write.UpdateAttempt(new AttemptUpdate("j1", 1, "n1", "RUNNING", 42L, 11L, null, null, "started")));
        commit(new Write.UpdateAttempt(new AttemptUpdate("j1", 1, "n1", "SUCCEEDED", null, null, 20L, 0, "exit code 0")),
                new Write.UpdateAttempt(new AttemptUpdate("j1", 1, "n1", "RUNNING", 42L, 11L, null, null, null)),
                new Write.UpdateAttempt(new AttemptUpdate("j1", 9, "n1", "FAILED", null, null, 20L, 1, "no such attempt")));
        commit(new Write.UpdateAttempt(new AttemptUpdate("j1", 1, "n1", "STOPPING", null, null, null, null, "stop requested")),
                new Write.InsertAttempt(new AttemptRow("j1", 2, "n2", "[]", 30, "ASSIGNED", null, null, null, null, null)),
                new Write.UpdateAttempt(new AttemptUpdate("j1", 2, "n2", "LOST", null, null, 40L, null, "node n2 lost")),
                new Write.UpdateAttempt(new AttemptUpdate("j1", 2, "n2", "STOPPED", null, 31L, 35L, 143, "fenced")));
        assertThat(store.attempts("j1")).extracting(AttemptRow::state, AttemptRow::endedMs).containsExactly(
                org.assertj.core.groups.Tuple.tuple("SUCCEEDED", 20L), org.assertj.core.groups.Tuple.tuple("STOPPED", 35L));
        assertThat(store.attemptExists("j1", 2, "n2")).isTrue();
        assertThat(store.attemptExists("j1", 2, "n1")).isFalse();
        assertThat(store.attempts("j1")).first().satisfies(a -> {
            assertThat(a.state()).isEqualTo("SUCCEEDED");
            assertThat(a.pid()).isEqualTo(42L);
            assertThat(a.startedMs()).isEqualTo(11L);
            assertThat(a.endedMs()).isEqualTo(20L);
            assertThat(a.exitCode()).isZero();
            assertThat(a.message()).isEqualTo("exit code 0");
        });
    }

    @Test
    void node_progress_and_node_credentials_survive_a_restart() {
        commit(new Write.PutNode(new NodeRow("n1", "{}", "agent", false, 5)),
                new Write.PutToken(new TokenRow("nt1", "cd".repeat(32), "node", null, "n1", 5, "n1")),
                new Write.PutToken(new TokenRow("nt0", "ef".repeat(32), "node", null, "n1", 4, "n1")),
                new Write.DeleteToken("nt0"),
                new Write.PutNodeProgress(new NodeProgress("n1", 3, 17)), new Write.PutNodeProgress(new NodeProgress("n1", 4, 18)));
        commit(new Write.PutNode(new NodeRow("n1", "{}", "agent", true, 5))); // a cordon keeps the progress
        store.close();
        store = new Store(Database.open(jdbcUrl()));
        RecoveredState r = store.recover();
        assertThat(r.progress().get("n1")).isEqualTo(new NodeProgress("n1", 4, 18));
        assertThat(r.tokens()).singleElement().extracting(TokenRow::id, TokenRow::node).containsExactly("nt1", "n1");
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

    /**
     * A commit can go through while its answer is lost (the database dies after making it durable, before it
     * answers): the writer then commits the same batch again. That must succeed and change nothing; a duplicate
     * key instead would fail every retry, and the service would never write again.
     */
    @Test
    void a_batch_committed_again_after_its_answer_was_lost_succeeds_and_changes_nothing() throws Exception {
        JobRow a = job(1, "t1", "k1");
        List<Write> batch = List.of(
                new Write.PutTenant(new TenantRow("t1", 1, 0, 0, 5)),
                new Write.PutNode(new NodeRow("n1", "{}", "agent", false, 5)),
                new Write.PutToken(new TokenRow("nt1", "cd".repeat(32), "node", null, "n1", 5, "n1")),
                new Write.PutToken(new TokenRow("nt0", "ef".repeat(32), "node", null, "n1", 4, "n1")),
                new Write.DeleteToken("nt0"),
                new Write.PutSetting("scheduler", "{}"),
                new Write.PutPredictor(new PredictorRow("history", "saved", 1, 5)),
                new Write.InsertJob(a),
                new Write.InsertEvent(new EventRow(1, "j1", 1001, "SUBMITTED", null)),
                new Write.UpdateJob(a.withState("RUNNING", 2000L, null, 0, null, null).nextAttempt()),
                new Write.SetAllocation("j1", List.of(new GrantRow(0, "n1", 0, 500, 1000, false))),
                new Write.InsertEvent(new EventRow(2, "j1", 2000, "STARTED", null)),
                new Write.InsertAttempt(new AttemptRow("j1", 1, "n1", "[]", 2000, "ASSIGNED", null, null, null, null, null)),
                new Write.UpdateAttempt(new AttemptUpdate("j1", 1, "n1", "RUNNING", 42L, 2001L, null, null, null)),
                new Write.AppendOutput(new OutputChunk("j1", 1, "n1", "stdout", 0, "hi\n".getBytes(StandardCharsets.UTF_8), false, 2002)),
                new Write.PutNodeProgress(new NodeProgress("n1", 2, 7)));
        store.writer().submit(batch).get(10, TimeUnit.SECONDS);
        List<String> once = rows();
        store.writer().submit(batch).get(10, TimeUnit.SECONDS);
        assertThat(rows()).isEqualTo(once);
        assertThat(once).as("each row once").hasSize(11);
    }

    private static UsageGrantRow usage(String job, int attempt, String node, int gpu, String tenant, long start, Long end, double used, double joules, long metered) {
        return new UsageGrantRow(job, attempt, node, gpu, tenant, "ann", "A100-80GB", 500, 40_000, start, end, used, joules, metered);
    }

    @Test
    void usage_rows_are_absolute_read_back_by_window_and_the_open_ones_after_a_restart() {
        commit(new Write.PutUsage(usage("j1", 1, "n1", 0, "t1", 1000, null, 0, 0, 1000)),
                new Write.PutUsage(usage("j1", 1, "n1", 0, "t1", 1000, null, 100, 30, 1500)),
                new Write.PutUsage(usage("j2", 1, "n2", 3, "t2", 1200, null, 0, 0, 1200)));
        commit(new Write.PutUsage(usage("j1", 1, "n1", 0, "t1", 1000, 2000L, 400, 90, 2000)),
                new Write.PutJobEnd(new JobEndRow("j1", "t1", "ann", "SUCCEEDED", 900, 2000)),
                new Write.PutJobEnd(new JobEndRow("j3", "t1", "", "CANCELLED", 950, 1900)));
        store.close();
        store = new Store(Database.open(jdbcUrl()));

        assertThat(store.recover().openUsage()).extracting(UsageGrantRow::jobId).containsExactly("j2");
        UsageStore usage = new UsageStore(store.database());
        assertThat(usage.grants(0, 5000, null)).extracting(UsageGrantRow::jobId).containsExactly("j1", "j2");
        assertThat(usage.grants(0, 5000, "t1")).singleElement().satisfies(u -> {
            assertThat(u.endedMs()).isEqualTo(2000L);
            assertThat(u.usedGpuMs()).isEqualTo(400.0);
            assertThat(u.energyJ()).isEqualTo(90.0);
            assertThat(u.meteredUntilMs()).isEqualTo(2000L);
        });
        assertThat(usage.grants(2000, 5000, null)).extracting(UsageGrantRow::jobId).as("j1 was released at 2000").containsExactly("j2");
        assertThat(usage.grants(0, 1000, null)).as("nothing held before 1000").isEmpty();
        List<UsageStore.EndedJob> ended = usage.endedJobs(0, 5000, "t1");
        assertThat(ended).extracting(e -> e.end().jobId()).containsExactly("j3", "j1");
        assertThat(ended.get(1).firstStartedMs()).isEqualTo(1000L);
        assertThat(ended.get(1).nodes()).containsExactly("n1");
        assertThat(ended.get(1).gpuModels()).containsExactly("A100-80GB");
        assertThat(ended.get(0).firstStartedMs()).as("never started").isNull();
        assertThat(usage.endedJobs(1950, 5000, null)).extracting(e -> e.end().jobId()).containsExactly("j1");
    }

    @Test
    void the_finished_jobs_of_a_window_come_in_submit_order_with_their_grants_and_the_active_ones_are_counted() {
        commit(new Write.InsertJob(new JobRow(1, "j1", "t1", null, "{\"spec\":1}", "SUCCEEDED", 900, 1600L, 2000L, 0, 0, null)),
                new Write.InsertJob(new JobRow(2, "j2", "t2", null, "{}", "CANCELLED", 950, null, 1900L, 0, null, null)),
                new Write.InsertJob(new JobRow(3, "j3", "t1", null, "{}", "RUNNING", 960, 1000L, null, 0, null, null)),
                new Write.InsertJob(new JobRow(4, "j4", "t1", null, "{}", "SUCCEEDED", 100, 200L, 300L, 0, 0, null)),
                new Write.PutUsage(usage("j1", 2, "n1", 1, "t1", 1600, 2000L, 0, 0, 2000)),
                new Write.PutUsage(usage("j1", 1, "n1", 0, "t1", 1000, 1500L, 0, 0, 1500)),
                new Write.PutUsage(usage("j4", 1, "n2", 0, "t1", 200, 300L, 0, 0, 300)),
                new Write.PutJobEnd(new JobEndRow("j1", "t1", "ann", "SUCCEEDED", 900, 2000)),
                new Write.PutJobEnd(new JobEndRow("j2", "t2", "", "CANCELLED", 950, 1900)),
                new Write.PutJobEnd(new JobEndRow("j4", "t1", "ann", "SUCCEEDED", 100, 300)));
        UsageStore usage = new UsageStore(store.database());
        UsageStore.FinishedJobs all = usage.finishedJobs(500, 5000, null, 10);
        // j4 was submitted before the window; j3 is still running
        assertThat(all.jobs()).extracting(UsageStore.FinishedJob::jobId).containsExactly("j1", "j2");
        assertThat(all.jobs().getFirst().spec()).isEqualTo("{\"spec\":1}");
        assertThat(all.jobs().getFirst().grants()).extracting(UsageGrantRow::attempt).containsExactly(1, 2);
        assertThat(all.jobs().get(1).grants()).as("never started").isEmpty();
        assertThat(all.unfinished()).isEqualTo(1);
        assertThat(all.more()).isFalse();
        assertThat(usage.finishedJobs(500, 5000, "t2", 10).jobs()).extracting(UsageStore.FinishedJob::jobId).containsExactly("j2");
        assertThat(usage.finishedJobs(500, 5000, "t2", 10).unfinished()).isZero();
        UsageStore.FinishedJobs one = usage.finishedJobs(500, 5000, null, 1);
        assertThat(one.jobs()).extracting(UsageStore.FinishedJob::jobId).containsExactly("j1");
        assertThat(one.more()).isTrue();
    }

    @Test
    void a_usage_batch_committed_twice_leaves_the_same_rows() throws Exception {
        List<Write> batch = List.of(new Write.PutUsage(usage("j1", 1, "n1", 0, "t1", 1000, null, 10, 3, 1100)),
                new Write.PutUsage(usage("j1", 1, "n1", 0, "t1", 1000, 1500L, 20, 6, 1500)),
                new Write.PutJobEnd(new JobEndRow("j1", "t1", "ann", "FAILED", 900, 1500)));
        store.writer().submit(batch).get(10, TimeUnit.SECONDS);
        List<String> once = usageRows();
        store.writer().submit(batch).get(10, TimeUnit.SECONDS);
        assertThat(usageRows()).isEqualTo(once).hasSize(2);
    }

    private List<String> usageRows() throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = store.database().connection(); Statement st = c.createStatement()) {
            for (String table : List.of("usage_grants", "usage_jobs")) {
                try (ResultSet rs = st.executeQuery("SELECT * FROM " + table)) {
                    while (rs.next()) {
                        StringBuilder row = new StringBuilder(table);
                        for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) row.append(' ').append(rs.getObject(i));
                        out.add(row.toString());
                    }
                }
            }
        }
        return out;
    }

    /** Every row of every table, as text, sorted; without jobs.change_seq (the number of the transaction that wrote it, not content). */
    private List<String> rows() throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = store.database().connection(); Statement st = c.createStatement()) {
            for (String table : List.of("jobs", "allocations", "job_events", "job_attempts", "job_output", "tenants", "tokens", "nodes",
                    "settings", "runtime_predictors")) {
                try (ResultSet rs = st.executeQuery("SELECT * FROM " + table)) {
                    int columns = rs.getMetaData().getColumnCount();
                    while (rs.next()) {
                        StringBuilder row = new StringBuilder(table);
                        for (int i = 1; i <= columns; i++) {
                            if (rs.getMetaData().getColumnName(i).equalsIgnoreCase("change_seq")) continue;
                            Object v = rs.getObject(i);
                            row.append(' ').append(v instanceof byte[] b ? HexFormat.of().formatHex(b) : v);
                        }
                        out.add(row.toString());
                    }
                }
            }
        }
        out.sort(null);
        return out;
    }
}
