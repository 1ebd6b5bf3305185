package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;
import io.gpupool.engine.TenantLedger;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Weighted fair share across tenants by dominant resource (DRF over GPUs and GPU memory), with decayed
 * usage. Each step takes the oldest pending job of the tenant with the lowest key (share / weight);
 * tenants below their guarantee go first. Idle quota is lent: a tenant may run beyond its guarantee
 * with preemptible jobs, and a tenant below its guarantee reclaims by preempting such borrowers.
 */
public final class FairSharePolicy implements QueuePolicy {
    @Override public String name() { return "fair-share"; }

    @Override public BlockingMode blocking() { return BlockingMode.SKIP; }

    @Override public boolean preemptive() { return true; }

    @Override
    public JobQueue queue(PolicyContext ctx, Collection<JobState> pending) {
        Map<String, ArrayDeque<JobState>> byTenant = new LinkedHashMap<>();
        List<JobState> sorted = new ArrayList<>(pending);
        sorted.sort(Comparator.comparingLong((JobState j) -> j.spec().submitTimeMs()).thenComparingLong(JobState::seq));
        for (JobState j : sorted) byTenant.computeIfAbsent(j.spec().tenant(), t -> new ArrayDeque<>()).add(j);
        TenantLedger ledger = ctx.ledger();
        return new JobQueue() {
            @Override
            public JobState poll() {
                String best = null;
                boolean bestUnder = false;
                double bestKey = 0;
                for (var e : byTenant.entrySet()) {
                    if (e.getValue().isEmpty()) continue;
                    String t = e.getKey();
                    boolean under = belowGuarantee(ledger, t, 0);
                    double key = ledger.fairShareKey(t, e.getValue().peek().gpuUnits());
                    if (best == null || (under && !bestUnder) || (under == bestUnder && key < bestKey - 1e-12)) {
                        best = t;
                        bestUnder = under;
                        bestKey = key;
                    }
                }
                return best == null ? null : byTenant.get(best).poll();
            }

            @Override
            public void requeue(JobState job) {
                ArrayDeque<JobState> q = byTenant.computeIfAbsent(job.spec().tenant(), t -> new ArrayDeque<>());
                List<JobState> all = new ArrayList<>(q);
                all.add(job);
                all.sort(Comparator.comparingLong((JobState j) -> j.spec().submitTimeMs()).thenComparingLong(JobState::seq));
                q.clear();
                q.addAll(all);
            }
        };
    }

    static boolean belowGuarantee(TenantLedger ledger, String tenant, double extraGpus) {
        TenantLedger.Account a = ledger.account(tenant);
        return a.config().guaranteedGpus() > 0 && a.gpus() + extraGpus <= a.config().guaranteedGpus() + 1e-9;
    }

    static boolean anyGuarantees(PolicyContext ctx) {
        return ctx.config().tenants().values().stream().anyMatch(t -> t.guaranteedGpus() > 0);
    }

    /** A non-preemptible job may not borrow: it could never be reclaimed. */
    @Override
    public String admit(PolicyContext ctx, JobState job) {
        if (job.spec().preemptible() || !anyGuarantees(ctx)) return null;
        if (belowGuarantee(ctx.ledger(), job.spec().tenant(), job.gpuUnits())) return null;
        return "non-preemptible job would exceed tenant " + job.spec().tenant() + "'s guarantee, and borrowed GPUs must be reclaimable";
    }

    /** Only a job that stays within its tenant's guarantee reclaims; without guarantees nobody does. */
    @Override
    public boolean mayPreemptAny(PolicyContext ctx, JobState job) {
        return belowGuarantee(ctx.ledger(), job.spec().tenant(), job.gpuUnits());
    }

    /** Reclaim: a job within its tenant's guarantee may preempt jobs of tenants above theirs. */
    @Override
    public boolean mayPreempt(PolicyContext ctx, JobState job, JobState victim) {
        String t = job.spec().tenant();
        String v = victim.spec().tenant();
        if (t.equals(v) || !belowGuarantee(ctx.ledger(), t, job.gpuUnits())) return false;
        TenantLedger.Account va = ctx.ledger().account(v);
        return va.gpus() > va.config().guaranteedGpus() + 1e-9;
    }

    /**
     * Reclaim takes only what borrowers borrowed: a victim's tenant must still be above its guarantee once
     * the victims already chosen from it are gone (otherwise a reclaim could push a tenant that borrowed one
     * GPU far below its own guarantee while other borrowers keep theirs).
     */
    @Override
    public boolean mayAlsoPreempt(PolicyContext ctx, JobState job, JobState victim, List<JobState> chosen) {
        String v = victim.spec().tenant();
        double taken = 0;
        for (JobState c : chosen) if (c.spec().tenant().equals(v)) taken += c.gpuUnits();
        TenantLedger.Account va = ctx.ledger().account(v);
        return va.gpus() - taken > va.config().guaranteedGpus() + 1e-9;
    }

    @Override
    public Comparator<JobState> victimOrder(PolicyContext ctx) {
        TenantLedger ledger = ctx.ledger();
        return Comparator.comparingDouble((JobState j) -> -ledger.fairShareKey(j.spec().tenant()))
                .thenComparing(QueuePolicy.super.victimOrder(ctx));
    }
}
