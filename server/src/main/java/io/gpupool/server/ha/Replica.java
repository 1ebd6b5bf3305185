package io.gpupool.server.ha;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * What this server process is in the service (high availability): the active replica (runs the engine, the only
 * writer) or a standby, with the lease epoch it holds and where the active one is. /healthz, /metrics and the dashboard
 * read it. On SQLite a server is always the one active replica (epoch 0).
 */
public final class Replica {
    public enum Role { ACTIVE, STANDBY }

    /** The header every answer of a standby carries: the active replica's URL (empty when none is known). */
    public static final String ACTIVE_HEADER = "X-Gpupool-Active";

    private volatile String selfUrl;
    private volatile Role role;
    private volatile long epoch;
    private volatile Supplier<String> activeUrl;
    private final AtomicLong takeovers = new AtomicLong();

    private final boolean replicated;

    /** A replica of a replicated service (PostgreSQL), starting in {@code role}. */
    public Replica(String selfUrl, Role role) {
        this(selfUrl, role, true);
    }

    private Replica(String selfUrl, Role role, boolean replicated) {
        this.selfUrl = selfUrl;
        this.role = role;
        this.replicated = replicated;
        this.activeUrl = () -> "";
    }

    /** The one server of an embedded store. */
    public static Replica single(String selfUrl) {
        return new Replica(selfUrl, Role.ACTIVE, false);
    }

    /**
     * Whether this is one of several replicas: its HTTP port is then opened with SO_REUSEPORT, so that at a takeover the
     * active server listens before the standby's listener closes and clients never find the port closed.
     */
    public boolean replicated() { return replicated; }

    /** Where this replica is reached, once it listens (its port may be chosen then). */
    public void advertise(String url) {
        this.selfUrl = url;
    }

    public Role role() { return role; }
    public long epoch() { return epoch; }
    public String selfUrl() { return selfUrl; }
    /** Takeovers this process made (0 or 1: a replica that loses the lease exits). */
    public long takeovers() { return takeovers.get(); }

    /** The active replica's URL, as the lease row names it ("" when unknown). */
    public String activeUrl() {
        return role == Role.ACTIVE ? selfUrl : activeUrl.get();
    }

    public void standby(Supplier<String> activeUrl) {
        this.activeUrl = activeUrl;
        this.role = Role.STANDBY;
    }

    /**
     * This replica holds the lease of {@code epoch} and is starting to serve as the active one: a standby's answers now
     * name this replica. The role turns active with {@link #serving}, once the API is served here.
     */
    public void tookOver(long epoch) {
        this.epoch = epoch;
        String self = selfUrl;
        this.activeUrl = () -> selfUrl != null ? selfUrl : self;
        takeovers.incrementAndGet();
    }

    /** The API is served here: /healthz says active from now on. */
    public void serving() {
        this.role = Role.ACTIVE;
    }

    /** The body of /healthz. */
    public Map<String, Object> health() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("status", "ok");
        m.put("role", role.name().toLowerCase());
        m.put("self", selfUrl);
        m.put("active", activeUrl());
        m.put("epoch", epoch);
        return m;
    }
}
