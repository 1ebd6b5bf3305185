package io.gpupool.engine;

import io.gpupool.engine.policy.FairSharePolicy;
import io.gpupool.engine.status.Status;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Code;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static io.gpupool.engine.RefusalAssert.assertRefusal;
import static io.gpupool.engine.TestPools.A100;
import static io.gpupool.engine.TestPools.job;
import static io.gpupool.engine.TestPools.pool;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tenant quotas under {@code fair-share}, worked out by hand on one 8- or 4-GPU node with half-life 0 (the
 * fair-share key is the share held now): guaranteed minimum first, idle quota lent only to work that can be
 * reclaimed, and a reclaim that takes back only what borrowers borrowed. (The hard limit: PlacementTest.)
 */
class QuotaTest {
    private static Scheduler fairShare(int gpus, TenantConfig... tenants) {
        Map<String, TenantConfig> byName = new java.util.HashMap<>();
        for (TenantConfig t : tenants) byName.put(t.name(), t);
        return new Scheduler(pool(1, gpus, A100), SchedulerConfig.defaults("fair-share").withPolicyArgs(new FairSharePolicy.Args(0)).withTenants(byName));
    }

    private static void submit(Scheduler s, String id, String tenant, int gpus, long nowMs) {
        assertThat(s.submit(job(id, gpus).tenant(tenant).submitMs(nowMs).build(), nowMs).accepted()).as(id).isTrue();
    }

    private static JobStatus status(Scheduler s, String id) {
        return s.job(id).status();
    }

    @Test
    void aTenantBelowItsGuaranteeGoesFirstWhateverItsShare() {
        // 4 GPUs; a holds 1 and is guaranteed 3; a and b each queue two 1-GPU jobs for the 3 free GPUs.
        // By share alone b (holding 0) would go first and the two tenants would alternate: b1, a1, b2.
        for (boolean guaranteed : new boolean[] {true, false}) {
            Scheduler s = fairShare(4, new TenantConfig("a", 1, guaranteed ? 3 : 0, 0), new TenantConfig("b", 1, 0, 0));
            submit(s, "a0", "a", 1, 0);
            s.schedule(0);
            for (String id : new String[] {"a1", "a2"}) submit(s, id, "a", 1, 10_000);
            for (String id : new String[] {"b1", "b2"}) submit(s, id, "b", 1, 10_000);
            RoundResult r = s.schedule(10_000);
            if (guaranteed) assertThat(r.started()).containsExactly("a1", "a2", "b1");
            else assertThat(r.started()).containsExactly("b1", "a1", "b2");
            s.checkConsistency();
        }
    }

    @Test
    void idleQuotaIsLentOnlyToWorkThatCanBeReclaimed() {
        // a and b are guaranteed 2 of 4 GPUs each; b is idle. A non-preemptible 3-GPU job of a would borrow
        // b's quota for good, so it waits; a preemptible one borrows it.
        Scheduler s = fairShare(4, new TenantConfig("a", 1, 2, 0), new TenantConfig("b", 1, 2, 0));
        s.submit(job("pinned", 3).tenant("a").preemptible(false).build(), 0);
        s.schedule(0);
        assertThat(status(s, "pinned")).isEqualTo(JobStatus.PENDING);
        assertRefusal(s.job("pinned").waitStatus(), Code.UNSCHEDULABLE, Status.ADMISSION, Resource.NONE);
        submit(s, "borrower", "a", 3, 0);
        s.schedule(0);
        assertThat(status(s, "borrower")).isEqualTo(JobStatus.RUNNING);
        assertThat(s.ledger().account("a").gpus()).isEqualTo(3.0);
    }

    @Test
    void aReclaimTakesBackOnlyWhatBorrowersBorrowed() {
        // 8 GPUs: b (guaranteed 4) runs three 2-GPU jobs, borrowing 2; c (guaranteed 0) borrows 2. a (guaranteed
        // 4) asks for 4. b has the larger share, so its jobs are the first victims, but taking two of them would
        // push b to 2 GPUs, below its own guarantee, while c kept what it borrowed: one job of b and c's job go.
        Scheduler s = fairShare(8, new TenantConfig("a", 1, 4, 0), new TenantConfig("b", 1, 4, 0), new TenantConfig("c", 1, 0, 0));
        for (String id : new String[] {"b1", "b2", "b3"}) submit(s, id, "b", 2, 0);
        submit(s, "c1", "c", 2, 0);
        assertThat(s.schedule(0).started()).containsExactly("b1", "b2", "b3", "c1");
        submit(s, "a1", "a", 4, 100_000);
        RoundResult r = s.schedule(100_000);
        assertThat(r.preempted()).containsExactly("b3", "c1");
        assertThat(r.started()).containsExactly("a1");
        assertThat(s.ledger().account("a").gpus()).isEqualTo(4.0);
        assertThat(s.ledger().account("b").gpus()).as("b keeps its guarantee").isEqualTo(4.0);
        assertThat(s.ledger().account("c").gpus()).isEqualTo(0.0);
        // the preempted jobs wait with the service they had
        assertThat(s.job("b3").attainedMs(100_000)).isEqualTo(100_000);
        assertThat(status(s, "c1")).isEqualTo(JobStatus.PENDING);
        s.checkConsistency();
    }
}
