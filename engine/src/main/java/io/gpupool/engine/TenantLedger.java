package io.gpupool.engine;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What each tenant holds now and has used lately. Usage is the dominant share (max of GPU share and
 * GPU-memory share, as in DRF) averaged with exponential decay: a constant share s held for long reads
 * as s, and past use fades with the configured half-life (Slurm's PriorityDecayHalfLife).
 */
public final class TenantLedger {
    /** One tenant's account. */
    public static final class Account {
        TenantConfig config;
        double gpus;          // GPU units held now
        long memoryMib;       // GPU memory held now
        double decayedShare;  // decayed dominant share
        double gpuMsTotal;    // GPU-ms consumed in all

        Account(TenantConfig config) { this.config = config; }

        public TenantConfig config() { return config; }
        public double gpus() { return gpus; }
        public long memoryMib() { return memoryMib; }
        public double decayedShare() { return decayedShare; }
        public double gpuMsTotal() { return gpuMsTotal; }
    }

    /** Half-life of past usage unless the policy that reads it says otherwise ({@code UsageHalfLife}). */
    public static final long DEFAULT_HALF_LIFE_MS = 3_600_000L;

    private Map<String, TenantConfig> configured;
    private final Map<String, Account> accounts = new LinkedHashMap<>();
    private double totalGpus;
    private double totalMemoryMib;
    private long halfLifeMs;
    private long lastMs;

    public TenantLedger(Map<String, TenantConfig> configured, double totalGpus, double totalMemoryMib, long halfLifeMs, long startMs) {
        this.configured = configured;
        this.totalGpus = Math.max(totalGpus, 1e-9);
        this.totalMemoryMib = Math.max(totalMemoryMib, 1e-9);
        this.halfLifeMs = halfLifeMs;
        this.lastMs = startMs;
        configured.values().forEach(c -> accounts.put(c.name(), new Account(c)));
    }

    /** New weights, guarantees, limits and half-life; what tenants hold and used stays. */
    public void reconfigure(Map<String, TenantConfig> tenants, long halfLifeMs) {
        this.configured = tenants;
        this.halfLifeMs = halfLifeMs;
        for (Account a : accounts.values()) a.config = tenants.getOrDefault(a.config.name(), TenantConfig.defaultFor(a.config.name()));
        tenants.values().forEach(c -> account(c.name()));
    }

    /** The pool grew (a node joined): shares are measured against the new totals from now on. */
    public void setCapacity(double totalGpus, double totalMemoryMib) {
        this.totalGpus = Math.max(totalGpus, 1e-9);
        this.totalMemoryMib = Math.max(totalMemoryMib, 1e-9);
    }

    public Account account(String tenant) {
        Account a = accounts.get(tenant);   // not computeIfAbsent: rounds ask for every job, and its lambda would allocate each time
        if (a == null) {
            a = new Account(configured.getOrDefault(tenant, TenantConfig.defaultFor(tenant)));
            accounts.put(tenant, a);
        }
        return a;
    }

    public Collection<Account> accounts() { return accounts.values(); }

    /** Brings decayed usage up to {@code nowMs}, charging what each tenant held since the last call. */
    public void advance(long nowMs) {
        long dt = nowMs - lastMs;
        if (dt <= 0) return;
        double keep = halfLifeMs > 0 ? Math.pow(0.5, dt / (double) halfLifeMs) : 0.0;
        for (Account a : accounts.values()) {
            double s = dominantShare(a);
            a.decayedShare = s + (a.decayedShare - s) * keep;
            a.gpuMsTotal += a.gpus * dt;
        }
        lastMs = nowMs;
    }

    void charge(String tenant, double gpus, long memoryMib) {
        Account a = account(tenant);
        a.gpus += gpus;
        a.memoryMib += memoryMib;
        if (Math.abs(a.gpus) < 1e-9) a.gpus = 0;
    }

    /** DRF dominant share of what the tenant holds now. */
    public double dominantShare(Account a) {
        return Math.max(a.gpus / totalGpus, a.memoryMib / totalMemoryMib);
    }

    /**
     * Fair-share key (lower runs first): with a half-life, the decayed dominant share plus a small
     * weight ({@link #HELD_WEIGHT}) on what is held now, so rounding to whole GPUs is paid back over
     * time; without, the share held now. Divided by the tenant's weight.
     */
    public double fairShareKey(String tenant) {
        return fairShareKey(tenant, 0);
    }

    /** Weight of what is held now next to decayed history in the key: enough to spread one round's GPUs. */
    static final double HELD_WEIGHT = 0.1;

    /**
     * The key the tenant would have after taking {@code gpus} more GPUs. With a half-life, decayed usage
     * dominates, so a tenant below its weight share keeps winning until its history has caught up (whole-GPU
     * rounding is paid back over time); what it holds now, plus the grant, only spreads one round's GPUs.
     */
    public double fairShareKey(String tenant, double gpus) {
        Account a = account(tenant);
        double now = dominantShare(a);
        double share = halfLifeMs > 0 ? a.decayedShare + HELD_WEIGHT * (now + gpus / totalGpus) : now;
        return share / a.config.weight();
    }

    public double totalGpus() { return totalGpus; }
}
