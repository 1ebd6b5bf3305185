package io.gpupool.engine;

import io.gpupool.engine.reservation.Reservation;
import io.gpupool.engine.reservation.ReservationBook;
import io.gpupool.engine.reservation.ReservationRequest;
import io.gpupool.engine.status.Code;
import io.gpupool.engine.status.Resource;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.gpupool.engine.RefusalAssert.assertRefusal;
import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.T4;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Advance reservations: what is refused at creation (with the field and the reason), which GPUs are chosen, and who may
 * use reserved GPUs when (before the window only jobs whose time limit ends before it; inside it only the tenant's).
 * Times in seconds: 1 node of 8 A100s unless said otherwise.
 */
class ReservationTest {
    private static final long S = 1000;

    private static Scheduler scheduler(String policy) {
        return new Scheduler(pool(1, 8, A100), SchedulerConfig.defaults(policy));
    }

    private static ReservationRequest a100s(String name, String tenant, int gpus, long startSec, long endSec) {
        return ReservationRequest.ofModel(name, tenant, startSec * S, endSec * S, gpus, "A100-80GB");
    }

    private static void assertRefused(Scheduler s, ReservationRequest q, long nowMs, String field, String... words) {
        int before = s.reservations().size();
        assertThatThrownBy(() -> s.reserve(q, nowMs)).isInstanceOfSatisfying(SpecException.class, e -> {
            assertThat(e.field()).as(e.getMessage()).isEqualTo(field);
            assertThat(e.rule()).contains(words);
        });
        assertThat(s.reservations()).as("a refused reservation changes nothing").hasSize(before);
    }

    // ---- refusals at creation ---------------------------------------------------------------------

    @Test
    void aWindowThatEndsBeforeItStartsOrIsOverIsRefused() {
        Scheduler s = scheduler("fcfs");
        assertRefused(s, a100s("r", "b", 4, 200, 200), 0, "end", "must be after the start");
        assertRefused(s, a100s("r", "b", 4, 200, 100), 0, "end", "must be after the start");
        s.schedule(500 * S);
        assertRefused(s, a100s("r", "b", 4, 100, 400), 500 * S, "end", "in the past");
        // a start in the past with an end to come means now
        Reservation r = s.reserve(a100s("r", "b", 4, 100, 600), 500 * S).reservation();
        assertThat(r.startMs()).isEqualTo(500 * S);
    }

    @Test
    void moreGpusThanTheModelHasAnUnknownModelNodeOrTenantAreRefused() {
        Scheduler s = scheduler("fcfs");
        assertRefused(s, a100s("r", "b", 9, 100, 200), 0, "gpus", "only 8 GPUs of model A100-80GB", "9 asked");
        assertRefused(s, ReservationRequest.ofModel("r", "b", 100 * S, 200 * S, 1, "H100-80GB"), 0, "model", "no GPU of model 'H100-80GB'");
        assertRefused(s, a100s("r", "b", 0, 100, 200), 0, "gpus", "at least 1");
        assertRefused(s, ReservationRequest.ofNodes("r", "b", 100 * S, 200 * S, List.of("a100-80gb-0", "nope")), 0, "nodes[1]", "unknown node 'nope'");

        Scheduler withTenants = new Scheduler(pool(1, 8, A100), SchedulerConfig.defaults("fair-share")
                .withTenants(Map.of("a", new TenantConfig("a", 1, 0, 0))));
        assertRefused(withTenants, a100s("r", "b", 2, 100, 200), 0, "tenant", "unknown tenant 'b'");
        withTenants.reserve(a100s("r", "a", 2, 100, 200), 0);

        s.reserve(a100s("r", "b", 2, 100, 200), 0);
        assertRefused(s, a100s("r", "c", 2, 300, 400), 0, "name", "already exists");
    }

    @Test
    void overlappingReservationsThatTogetherExceedTheModelAreRefusedNamingThem() {
        Scheduler s = scheduler("fcfs");
        s.reserve(a100s("r1", "b", 6, 100, 200), 0);
        // [150, 250) overlaps r1: 2 of 8 left
        assertRefused(s, a100s("r2", "c", 3, 150, 250), 0, "gpus", "only 2 of the pool's 8", "r1 (tenant b, 6 GPUs");
        Reservation r2 = s.reserve(a100s("r2", "c", 2, 150, 250), 0).reservation();
        assertThat(r2.gpus()).doesNotContainAnyElementsOf(s.reservation("r1").gpus());
        // back to back with r1 ([200, 300) does not overlap [100, 200)): all 8 again, but r2 still holds 2 until 250
        assertRefused(s, a100s("r3", "c", 7, 200, 300), 0, "gpus", "only 6", "r2");
        s.reserve(a100s("r4", "c", 8, 250, 300), 0);
        // by nodes: any GPU of the node in an overlapping window is a clash
        assertRefused(s, ReservationRequest.ofNodes("r5", "d", 120 * S, 130 * S, List.of("a100-80gb-0")), 0, "nodes", "r1");
    }

    @Test
    void runningJobsOfOtherTenantsStillOnTheGpusAtTheStartAreRefusedNamingThemUnlessIgnored() {
        Scheduler s = scheduler("fcfs");
        s.submit(job("forever", 8).tenant("a").build(), 0);
        s.schedule(0);
        assertRefused(s, a100s("r", "b", 1, 100, 200), 10 * S, "start", "forever (no time limit)");
        assertRefused(s, ReservationRequest.ofNodes("r", "b", 100 * S, 200 * S, List.of("a100-80gb-0")), 10 * S, "start", "forever");
        ReservationBook.Planned p = s.reserve(a100s("r", "b", 2, 100, 200).ignoringRunningJobs(), 10 * S);
        assertThat(p.runningJobs()).containsExactly("forever");

        // a job whose limit ends by the start is no obstacle; the tenant's own running jobs neither
        Scheduler t = scheduler("fcfs");
        t.submit(job("short", 4).tenant("a").timeLimitSec(100).build(), 0);
        t.submit(job("own", 4).tenant("b").build(), 0);
        t.schedule(0);
        assertRefused(t, a100s("r", "b", 8, 50, 200), 0, "start", "short (time limit ends at t=100.0s)");
        assertThat(t.reserve(a100s("r", "b", 8, 100, 200), 0).runningJobs()).isEmpty();
    }

    @Test
    void aCountOfAModelTakesWholeNodesAndGpusNoJobWillHold() {
        List<NodeSpec> nodes = new ArrayList<>(pool(3, 4, A100).nodes());
        nodes.addAll(pool(1, 4, T4).nodes());
        Scheduler s = new Scheduler(new ClusterSpec(nodes), SchedulerConfig.defaults("fcfs"));
        s.submit(job("x", 1).tenant("a").build(), 0);   // binpack: on a100-80gb-0
        s.schedule(0);
        Reservation r = s.reserve(a100s("r", "b", 6, 100, 200), 0).reservation();
        assertThat(r.gpus()).extracting(Reservation.Gpu::toString)
                .containsExactly("a100-80gb-1:0", "a100-80gb-1:1", "a100-80gb-1:2", "a100-80gb-1:3", "a100-80gb-2:0", "a100-80gb-2:1");
        assertThat(r.model()).isEqualTo("A100-80GB");
    }

    // ---- who may use reserved GPUs when -------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {"fcfs", "fcfs-backfill", "priority", "fair-share", "qssf", "las", "themis", "gittins"})
    void beforeTheWindowOnlyJobsEndingBeforeItBackfillAndInsideItOnlyTheTenantsRun(String policy) {
        Scheduler s = scheduler(policy);
        s.reserve(a100s("r", "b", 8, 100, 200), 0);
        s.submit(job("ends-before", 4).tenant("a").timeLimitSec(100).submitSec(0).build(), 0);
        s.submit(job("crosses", 1).tenant("a").timeLimitSec(101).submitSec(0).build(), 0);
        s.submit(job("unlimited", 1).tenant("a").submitSec(0).build(), 0);
        assertThat(s.schedule(0).started()).containsExactly("ends-before");
        assertRefusal(s.job("crosses").waitStatus(), Code.UNSCHEDULABLE, ReservationBook.PLUGIN, Resource.GPUS);
        assertRefusal(s.job("unlimited").waitStatus(), Code.UNSCHEDULABLE, ReservationBook.PLUGIN, Resource.GPUS);
        assertThat(s.job("unlimited").waitReason()).contains("reserved by r (tenant b, 8 GPUs");
        assertThat(s.nextReevaluationMs(0).getAsLong()).as("a round when the window starts").isLessThanOrEqualTo(100 * S);

        s.complete("ends-before", 90 * S);
        s.submit(job("b-early", 2).tenant("b").submitSec(90).build(), 90 * S);
        assertThat(s.schedule(90 * S).started()).as("the tenant's job without a limit waits for the window too").isEmpty();

        s.submit(job("b-job", 4).tenant("b").submitSec(100).build(), 100 * S);
        assertThat(s.schedule(100 * S).started()).containsExactlyInAnyOrder("b-early", "b-job");
        s.submit(job("tiny", 1).tenant("a").timeLimitSec(1).submitSec(150).build(), 150 * S);
        assertThat(s.schedule(150 * S).started()).as("inside the window no other tenant's job, however short").isEmpty();
        assertThat(s.job("tiny").waitStatus().plugin()).isEqualTo(ReservationBook.PLUGIN);
        assertThat(s.nextReevaluationMs(150 * S).getAsLong()).isLessThanOrEqualTo(200 * S);
        s.complete("b-early", 160 * S);
        s.complete("b-job", 160 * S);

        assertThat(s.schedule(200 * S).started()).as("the window is over: GPUs for all").containsExactlyInAnyOrder("crosses", "unlimited", "tiny");
        assertThat(s.expireReservations(200 * S)).extracting(Reservation::name).containsExactly("r");
        s.checkConsistency();
    }

    @Test
    void aJobKeptOffReservedGpusNeverBlocksTheQueueEvenUnderStrictFcfs() {
        Scheduler s = scheduler("fcfs");
        s.reserve(a100s("r", "b", 4, 100, 200), 0);
        s.submit(job("long", 8).tenant("a").submitSec(0).build(), 0);     // fits only with the reserved GPUs
        s.submit(job("small", 4).tenant("a").submitSec(0).build(), 0);    // fits beside them
        assertThat(s.schedule(0).started()).containsExactly("small");
        assertThat(s.job("long").waitStatus().plugin()).isEqualTo(ReservationBook.PLUGIN);
    }

    @Test
    void aJobThatRunsInAReservationWaitsForItsWindowAndKeepsToItsGpus() {
        Scheduler s = scheduler("fcfs");
        Reservation r = s.reserve(a100s("r", "b", 2, 100, 200), 0).reservation();
        s.submit(job("in-r", 2).tenant("b").build(), 0);
        s.useReservation("in-r", "r");
        s.submit(job("in-r-too", 2).tenant("b").build(), 0);
        s.useReservation("in-r-too", "r");
        assertThat(s.schedule(0).started()).isEmpty();
        assertRefusal(s.job("in-r").waitStatus(), Code.UNSCHEDULABLE, ReservationBook.PLUGIN, Resource.NONE);
        assertThat(s.job("in-r").waitReason()).contains("waits for its reservation r");

        assertThat(s.schedule(100 * S).started()).containsExactly("in-r");
        assertThat(s.job("in-r").allocation().grants()).extracting(g -> s.cluster().node(g.node()).name() + ":" + g.gpu())
                .containsExactlyInAnyOrderElementsOf(r.gpus().stream().map(Reservation.Gpu::toString).toList());
        assertThat(s.job("in-r-too").waitStatus().plugin()).as("its reservation is full; 6 other GPUs are free").isEqualTo(ReservationBook.PLUGIN);

        assertThat(s.reservationMisfit(job("big", 3).tenant("b").build(), "r").message()).contains("has 2 GPUs");
        assertThat(s.reservationMisfit(job("other", 1).tenant("a").build(), "r").message()).contains("tenant b's, not a's");
        assertThat(s.reservationMisfit(job("x", 1).tenant("b").build(), "nope").message()).contains("no reservation named 'nope'");

        s.cancelReservation("r");
        s.schedule(120 * S);
        assertThat(s.job("in-r-too").waitReason()).contains("no longer exists");
    }

    @Test
    void aPreemptingPolicyPlansVictimsOutsideTheFence() {
        // fair-share reclaim: tenant g is below its guarantee and may preempt borrowers, but not onto GPUs reserved for b
        Map<String, TenantConfig> tenants = Map.of("g", new TenantConfig("g", 1, 4, 0), "a", new TenantConfig("a", 1, 0, 0),
                "b", new TenantConfig("b", 1, 0, 0));
        Scheduler s = new Scheduler(pool(1, 8, A100), SchedulerConfig.defaults("fair-share").withTenants(tenants));
        Reservation r = s.reserve(a100s("r", "b", 4, 100, 200), 0).reservation();
        s.submit(job("unlimited", 4).tenant("a").build(), 0);              // only outside the reservation
        s.submit(job("short", 4).tenant("a").timeLimitSec(50).build(), 0);  // on the reserved GPUs: it ends before the window
        assertThat(s.schedule(0).started()).containsExactly("unlimited", "short");
        s.submit(job("g-job", 4).tenant("g").build(), S);
        RoundResult round = s.schedule(S);
        // preempting "short" frees only reserved GPUs, which g-job may not take: the planner must see the fence
        assertThat(round.preempted()).containsExactly("unlimited");
        assertThat(s.job("g-job").status()).isEqualTo(JobStatus.RUNNING);
        List<String> reserved = r.gpus().stream().map(Reservation.Gpu::toString).toList();
        assertThat(s.job("g-job").allocation().grants()).extracting(g -> s.cluster().node(g.node()).name() + ":" + g.gpu())
                .doesNotContainAnyElementsOf(reserved);
        s.checkConsistency();
    }
}
