package io.gpupool.engine.policy;

import io.gpupool.engine.JobState;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.TenantLedger;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * Weighted fair share across tenants by dominant resource (DRF over GPUs and GPU memory), with decayed
 * usage. Each step takes the oldest pending job of the tenant with the lowest key (share / weight; on a tie,
 * the tenant whose oldest pending job arrived first);
 * tenants below their guarantee go first. Idle quota is lent: a tenant may run beyond its guarantee
 * with preemptible jobs, and a tenant below its guarantee reclaims by preempting such borrowers.
 */
public final class FairSharePolicy implements QueuePolicy, Admission, Preemption, UsageHalfLife, QueueObserver {
    /** @param halfLifeMs half-life of past usage in ms (0 = only what is held now counts) */
    public record Args(long halfLifeMs) implements PolicyArgs {
        public static final Args DEFAULTS = new Args(TenantLedger.DEFAULT_HALF_LIFE_MS);

        public Args {
            PolicyArgs.require(halfLifeMs >= 0, "halfLifeMs", "must be >= 0, got " + halfLifeMs);
        }
    }

    private final long halfLifeMs;

    public FairSharePolicy(Args args) {
        this.halfLifeMs = args.halfLifeMs();
    }

    @Override public String name() { return "fair-share"; }

    @Override public long usageHalfLifeMs() { return halfLifeMs; }

    private static final PolicyTraits TRAITS = PolicyTraits.of(BlockingMode.SKIP, PolicyTraits.Trait.PREEMPTIVE,
            PolicyTraits.Trait.ARRIVALS_ONLY_WHEN_SETTLED);

    @Override public PolicyTraits traits() { return TRAITS; }

    private static final Comparator<JobState> ARRIVAL = Comparator.comparingLong((JobState j) -> j.spec().submitTimeMs()).thenComparingLong(JobState::seq);

    /**
     * One tenant's pending jobs in arrival order for one round, with its key cached: a key reads only the ledger, which
     * changes when a job starts or is preempted in this round, so a round over a long queue does not recompute every
     * tenant's key for every job it tries. Its jobs are a list in arrival order (the standing one, not changed during
     * the round) walked by a cursor, merged with the jobs requeued in the round: what polling a list re-sorted at each
     * requeue gives.
     */
    private static final class TenantLine {
        final String tenant;
        final List<JobState> jobs;
        int next;
        PriorityQueue<JobState> requeued;
        boolean fresh;
        boolean under;
        double key;

        TenantLine(String tenant, List<JobState> jobs) {
            this.tenant = tenant;
            this.jobs = jobs;
        }

        boolean isEmpty() {
            return next >= jobs.size() && (requeued == null || requeued.isEmpty());
        }

        JobState peek() {
            JobState listed = next < jobs.size() ? jobs.get(next) : null;
            JobState back = requeued == null ? null : requeued.peek();
            if (back == null) return listed;
            return listed == null || ARRIVAL.compare(back, listed) < 0 ? back : listed;
        }

        JobState poll() {
            JobState j = peek();
            if (j == null) return null;
            if (requeued != null && j == requeued.peek()) requeued.poll();
            else next++;
            return j;
        }

        void requeue(JobState job) {
            if (requeued == null) requeued = new PriorityQueue<>(ARRIVAL);
            requeued.add(job);
        }
    }

    /** Lower key first; equal keys go to the tenant whose next job arrived first (whatever jobs the round was given). */
    private static boolean ranksBefore(TenantLine a, TenantLine b) {
        if (a.key < b.key - 1e-12) return true;
        return a.key <= b.key + 1e-12 && ARRIVAL.compare(a.peek(), b.peek()) < 0;
    }

    private final TenantLines standing = new TenantLines(ARRIVAL);   // the pending jobs by tenant, kept across rounds

    @Override public void queued(JobState job) { standing.queued(job); }

    @Override public void dequeued(JobState job) { standing.dequeued(job); }

    @Override
    public JobQueue queue(PolicyContext ctx, Collection<JobState> pending) {
        // the pending jobs are the scheduler's or some of them: as many as the standing lines hold means the same jobs
        Map<String, List<JobState>> kept = standing.lines();
        List<TenantLine> lines = new ArrayList<>();
        if (pending.size() == standing.size()) {
            for (Map.Entry<String, List<JobState>> e : kept.entrySet()) lines.add(new TenantLine(e.getKey(), e.getValue()));
            // tenants in the order of their oldest job, as grouping the sorted queue lists them
            lines.sort((a, b) -> ARRIVAL.compare(a.jobs.getFirst(), b.jobs.getFirst()));
        } else {
            // a round of arrivals: its own jobs only, sorted and grouped
            List<JobState> sorted = new ArrayList<>(pending);
            sorted.sort(ARRIVAL);
            Map<String, List<JobState>> groups = new LinkedHashMap<>();
            for (JobState j : sorted) groups.computeIfAbsent(j.spec().tenant(), t -> new ArrayList<>()).add(j);
            for (Map.Entry<String, List<JobState>> e : groups.entrySet()) lines.add(new TenantLine(e.getKey(), e.getValue()));
        }
        Map<String, TenantLine> byTenant = new HashMap<>();
        for (TenantLine l : lines) byTenant.put(l.tenant, l);
        TenantLedger ledger = ctx.ledger();
        return new JobQueue() {
            @Override
            public JobState poll() {
                TenantLine best = null;
                for (TenantLine l : lines) {
                    if (l.isEmpty()) continue;
                    if (!l.fresh) {
                        l.under = belowGuarantee(ledger, l.tenant, 0);
                        // what the tenant holds and has held, not the size of its next job: the order between
                        // tenants then does not depend on which of their jobs a round tries (a round of arrivals
                        // only ranks tenants as a full round would)
                        l.key = ledger.fairShareKey(l.tenant);
                        l.fresh = true;
                    }
                    if (best == null || (l.under && !best.under) || (l.under == best.under && ranksBefore(l, best))) best = l;
                }
                if (best == null) return null;
                // its key stays: it reads the ledger only, which changes when a job starts or is requeued (below)
                return best.poll();
            }

            @Override
            public void started(JobState job) {
                lines.forEach(l -> l.fresh = false); // the ledger changed
            }

            @Override
            public void requeue(JobState job) {
                TenantLine line = byTenant.computeIfAbsent(job.spec().tenant(), t -> {
                    TenantLine l = new TenantLine(t, List.of());
                    lines.add(l);
                    return l;
                });
                line.requeue(job);
                lines.forEach(l -> l.fresh = false); // the ledger changed
            }
        };
    }

    static boolean belowGuarantee(TenantLedger ledger, String tenant, double extraGpus) {
        TenantLedger.Account a = ledger.account(tenant);
        return a.config().guaranteedGpus() > 0 && a.gpus() + extraGpus <= a.config().guaranteedGpus() + 1e-9;
    }

    private SchedulerConfig guaranteesOf;   // the configuration `guarantees` was read from (admission asks for every job)
    private boolean guarantees;

    private boolean anyGuarantees(PolicyContext ctx) {
        if (ctx.config() != guaranteesOf) {
            guarantees = ctx.config().tenants().values().stream().anyMatch(t -> t.guaranteedGpus() > 0);
            guaranteesOf = ctx.config();
        }
        return guarantees;
    }

    /** A non-preemptible job may not borrow: it could never be reclaimed. */
    @Override
    public String admit(PolicyContext ctx, JobState job) {
        if (job.spec().preemptible() || !anyGuarantees(ctx)) return null;
        if (belowGuarantee(ctx.ledger(), job.spec().tenant(), job.gpuUnits())) return null;
        return "non-preemptible job would exceed tenant " + job.spec().tenant() + "'s guarantee, and borrowed GPUs must be reclaimable";
    }

    /** Without guarantees every job is admitted ({@link #admit}). */
    @Override
    public boolean admitsAll(PolicyContext ctx) {
        return !anyGuarantees(ctx);
    }

    /** Without guarantees nobody reclaims ({@link #mayPreemptAny}). */
    @Override
    public boolean noneMayPreempt(PolicyContext ctx) {
        return !anyGuarantees(ctx);
    }

    /** Only a job that stays within its tenant's guarantee reclaims; without guarantees nobody does. */
    @Override
    public boolean mayPreemptAny(PolicyContext ctx, JobState job) {
        // no tenant has a guarantee: nobody is below one (asked for every job a round tries)
        return anyGuarantees(ctx) && belowGuarantee(ctx.ledger(), job.spec().tenant(), job.gpuUnits());
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
                .thenComparing(Preemption.cheapestFirst(ctx));
    }
}
