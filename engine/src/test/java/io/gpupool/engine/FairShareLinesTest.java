package io.gpupool.engine;

import io.gpupool.engine.policy.FairSharePolicy;
import io.gpupool.engine.policy.HistoryMedianPredictor;
import io.gpupool.engine.policy.JobQueue;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.model.ClusterSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * fair-share keeps its tenants' lines standing across rounds (told of every job that enters or leaves the queue);
 * a round's queue must poll exactly what sorting and grouping the pending jobs gives (a policy told nothing does
 * that), through arrivals out of order, cancellations, starts that change the ledger during the round, jobs preempted
 * and requeued in the round (also of a tenant with nothing else queued), tenants below a guarantee, and rounds of
 * arrivals only (a subset of the queue).
 */
class FairShareLinesTest {
    private static final ClusterSpec POOL = pool(2, 8, A100);

    @Test
    void pollsWhatSortingTheQueueEachRoundGives() {
        for (long seed = 1; seed <= 40; seed++) replay(seed);
    }

    private static void replay(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        Map<String, TenantConfig> tenants = new LinkedHashMap<>();
        for (int t = 0; t < 4; t++) tenants.put("t" + t, new TenantConfig("t" + t, 1 + rnd.nextInt(3), rnd.nextInt(3) == 0 ? 4 : 0, 0));
        SchedulerConfig config = SchedulerConfig.defaults("fair-share").withTenants(tenants);
        TenantLedger ledger = new TenantLedger(tenants, 16, 16 * 81920, TenantLedger.DEFAULT_HALF_LIFE_MS, 0);
        ClusterState cluster = new ClusterState(POOL);
        FairSharePolicy told = new FairSharePolicy(FairSharePolicy.Args.DEFAULTS), plain = new FairSharePolicy(FairSharePolicy.Args.DEFAULTS);
        JobState.RoundNote note = new JobState.RoundNote();
        Map<String, JobState> pending = new LinkedHashMap<>();   // as the scheduler keeps them: in the order queued
        List<JobState> arrivals = new ArrayList<>();
        long now = 0, seq = 0;
        for (int round = 0; round < 60; round++) {
            now += 1000L * rnd.nextInt(1, 100);
            ledger.advance(now);
            arrivals.clear();
            for (int k = rnd.nextInt(0, 6); k > 0; k--) {
                // submit times collide and go back (a trace out of order): ties and insertions inside a line
                JobState j = new JobState(job("j" + seq, 1 + rnd.nextInt(4)).tenant("t" + rnd.nextInt(4))
                        .submitMs(Math.max(0, now - rnd.nextInt(4) * 20_000L)).build(), seq++, now, note);
                pending.put(j.id(), j);
                told.queued(j);
                arrivals.add(j);
            }
            if (!pending.isEmpty() && rnd.nextInt(3) == 0) {   // a cancellation between rounds
                JobState gone = new ArrayList<>(pending.values()).get(rnd.nextInt(pending.size()));
                pending.remove(gone.id());
                told.dequeued(gone);
                gone.status = JobStatus.CANCELLED;
                arrivals.remove(gone);   // a round of arrivals is given those still pending
            }
            boolean onlyArrivals = rnd.nextInt(4) == 0 && !arrivals.isEmpty() && arrivals.size() < pending.size();
            List<JobState> given = onlyArrivals ? List.copyOf(arrivals) : new ArrayList<>(pending.values());
            PolicyContext ctx = new PolicyContext(now, config, cluster, ledger, new HistoryMedianPredictor(3_600_000), null, List.of());
            JobQueue expected = plain.queue(ctx, given), actual = told.queue(ctx, given);
            List<JobState> startedNow = new ArrayList<>();
            while (true) {
                JobState e = expected.poll(), a = actual.poll();
                assertThat(a).as("seed %d round %d", seed, round).isSameAs(e);
                if (a == null) break;
                if (a.status != JobStatus.PENDING || rnd.nextInt(3) > 0) continue;   // the walk passes over jobs no longer pending
                // it starts: the ledger changes (tenants re-rank) and the scheduler tells the policy at once
                a.status = JobStatus.RUNNING;
                ledger.charge(a.spec().tenant(), a.gpuUnits(), 0);
                pending.remove(a.id());
                told.dequeued(a);
                expected.started(a);
                actual.started(a);
                startedNow.add(a);
                if (rnd.nextInt(4) == 0) {
                    // a victim preempted in this round: a job started before, or this one (possibly its tenant's last)
                    JobState victim = startedNow.get(rnd.nextInt(startedNow.size()));
                    victim.status = JobStatus.PENDING;
                    ledger.charge(victim.spec().tenant(), -victim.gpuUnits(), 0);
                    pending.put(victim.id(), victim);
                    told.queued(victim);
                    startedNow.remove(victim);
                    expected.requeue(victim);
                    actual.requeue(victim);
                }
            }
            // the started jobs end before the next round
            for (JobState j : startedNow) {
                j.status = JobStatus.COMPLETED;
                ledger.charge(j.spec().tenant(), -j.gpuUnits(), 0);
            }
        }
    }
}
