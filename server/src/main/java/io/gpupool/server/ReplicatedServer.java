package io.gpupool.server;

import io.gpupool.model.SpecException;
import io.gpupool.server.api.StandbyServer;
import io.gpupool.server.ha.ConnectionMigration;
import io.gpupool.server.ha.LeaseKeeper;
import io.gpupool.server.ha.Replica;
import io.gpupool.store.Database;
import io.gpupool.store.RecoveredState;
import io.gpupool.store.ServiceLease;
import io.gpupool.store.StoreException;
import io.gpupool.store.StoreFollower;
import io.gpupool.store.WriteFence;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * {@code gpupool server} as one replica of a service (high availability, issue 18; docs/architecture.md "High
 * availability"). On SQLite it is simply the one server. On PostgreSQL it becomes the active replica at once when the
 * lease is free, else it serves as a standby ({@link StandbyServer}), follows the store ({@link StoreFollower}, every
 * {@value #FOLLOW_MS} ms) and polls the lease every {@value #POLL_MS} ms; when it takes the lease over it catches up with
 * the last changes, starts the full server from that state on its port, and closes the standby's listener. A replica that loses the lease (a renewal finds another epoch, or a commit is
 * refused by the fencing token) exits with code 3; started again, it rejoins as a standby.
 */
public final class ReplicatedServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplicatedServer.class);
    static final long POLL_MS = 250;
    /** How often a standby catches up with the store (its warm copy); a takeover then reads only the changes of the last. */
    static final long FOLLOW_MS = 1000;
    /** How often a standby rehearses a takeover, to keep the JVM's code for it warm (a few hundred ms of one core). */
    static final long REHEARSAL_S = 10;
    /** The exit code of a replica that lost its lease. */
    public static final int STEPPED_DOWN = 3;

    private final PrintStream out;
    private volatile GpupoolServer active;
    private volatile StandbyServer standby;
    private volatile boolean closed;
    private Thread poller;
    private ServiceLease standbyLease;
    private Database standbyDb;

    private ReplicatedServer(PrintStream out) {
        this.out = out;
    }

    /** Starts the server (SQLite) or a replica (PostgreSQL): active if the lease is free, else standby until it is. */
    public static ReplicatedServer start(ServerOptions o, String predictor, PrintStream out) {
        ReplicatedServer r = new ReplicatedServer(out);
        if (o.dbUrl() == null || !o.dbUrl().startsWith("jdbc:postgresql:")) {
            r.active = GpupoolServer.start(o, predictor, out);
            return r;
        }
        GpupoolServer.Plan plan = GpupoolServer.plan(o, predictor);
        Database db = Database.open(o.dbUrl());
        boolean secure = plan.tls() != null;
        ServiceLease lease = new ServiceLease(db, holderId(), advertised(o, o.port(), secure), o.leaseTtlMs());
        Replica replica = new Replica(advertised(o, o.port(), secure), Replica.Role.STANDBY);
        try {
            OptionalLong won = lease.tryAcquire();
            if (won.isPresent()) {
                r.active = activate(plan, db, lease, won.getAsLong(), replica, null, out);
                replica.serving();
                return r;
            }
            replica.standby(() -> lease.lastSeen() == null ? "" : lease.lastSeen().url());
            r.standby = new StandbyServer(o.host(), o.port(), plan.tls(), replica).start();
        } catch (RuntimeException e) {
            lease.close();
            db.close();
            throw e;
        }
        r.standbyLease = lease;
        r.standbyDb = db;
        int port = r.standby.port();
        String self = advertised(o, port, secure);
        replica.advertise(self);
        lease.advertise(self);
        // not "listening on": scripts wait for that line to use the API, which a standby refuses
        out.println("gpupool server standby on " + r.standby.scheme() + "://" + displayHost(o.host()) + ":" + port + " (active replica: "
                + replica.activeUrl() + "); it takes over when the active's lease runs out or its database session ends");
        ConnectionMigration.hint(ConnectionMigration.SYSCTL).ifPresent(out::println);
        out.flush();
        GpupoolServer.Plan onPort = plan.withOptions(o.withPort(port));
        r.poller = Thread.ofPlatform().name("gpupool-standby").daemon(true).start(() -> r.follow(onPort, db, lease, replica));
        return r;
    }

    /**
     * The standby's loop: follows the store (a warm copy of the state a takeover needs, {@link StoreFollower}) and polls the
     * lease until it takes it over, then catches up once more and becomes the active replica on the same port.
     */
    private void follow(GpupoolServer.Plan plan, Database db, ServiceLease lease, Replica replica) {
        StoreFollower follower = new StoreFollower(db);
        long lastFollow = 0;
        long lastRehearsal = 0;
        while (!closed) {
            if (System.nanoTime() - lastFollow > TimeUnit.MILLISECONDS.toNanos(FOLLOW_MS)) {
                try {
                    follower.catchUp();
                } catch (StoreException e) {
                    LOG.warn("the standby cannot follow the store, trying again: {}", e.getMessage());
                }
                lastFollow = System.nanoTime();
            }
            if (follower.watermark() >= 0 && System.nanoTime() - lastRehearsal > TimeUnit.SECONDS.toNanos(REHEARSAL_S)) {
                try {
                    LOG.info("standby rehearsed a takeover (engine built from the followed state and dropped) in {} ms",
                            GpupoolServer.rehearse(plan, db, replica, follower.state()));
                } catch (RuntimeException e) {
                    LOG.warn("the standby's rehearsal of a takeover failed (the takeover itself will tell): {}", e.getMessage());
                }
                lastRehearsal = System.nanoTime();
            }
            try {
                TimeUnit.MILLISECONDS.sleep(POLL_MS);
            } catch (InterruptedException e) {
                return;
            }
            OptionalLong won;
            try {
                won = lease.tryAcquire();
            } catch (StoreException e) {
                LOG.warn("cannot check the service lease, trying again: {}", e.getMessage());
                continue;
            }
            if (won.isEmpty()) continue;
            long t0 = System.nanoTime();
            synchronized (this) {
                if (closed) return;
                // after the takeover's commit no other replica commits (the fencing token): this last delta completes the copy
                RecoveredState warm = null;
                String caughtUp = "read the store back";
                try {
                    int changed = follower.catchUp();
                    warm = follower.state();
                    caughtUp = "caught up " + changed + " changed jobs in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms";
                } catch (StoreException e) {
                    LOG.warn("the standby cannot catch up with the store; the takeover reads it back whole: {}", e.getMessage());
                }
                try {
                    // the active server opens the port beside the standby's listener (SO_REUSEPORT), then the standby's closes:
                    // clients find the port open throughout (a standby's 503 until the active listens)
                    active = activate(plan, db, lease, won.getAsLong(), replica, warm, out);
                } catch (RuntimeException e) {
                    // holding the lease without serving would leave the service without an active replica: go, so another takes over
                    out.println("gpupool server: cannot start as the active replica after the takeover: " + e.getMessage() + "; exiting");
                    out.flush();
                    Runtime.getRuntime().halt(1);
                }
                standby.close();
                standby = null;
                replica.serving();
                out.println("took over as the active replica (lease epoch " + won.getAsLong() + ") and serves in "
                        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms (" + caughtUp + "; " + active.startPhases() + ")");
                out.flush();
            }
            return;
        }
    }

    /**
     * The in-process start on PostgreSQL ({@link GpupoolServer#start}): waits for the lease (at most two lease lengths and
     * a second: a replica killed a moment ago has released it, a live one keeps it) and serves as the active replica.
     */
    static GpupoolServer activeWhenLeased(ServerOptions o, GpupoolServer.Plan plan, Database db, PrintStream out) {
        boolean secure = plan.tls() != null;
        ServiceLease lease = new ServiceLease(db, holderId(), advertised(o, o.port(), secure), o.leaseTtlMs());
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * o.leaseTtlMs() + 1000);
        try {
            while (true) {
                OptionalLong won = lease.tryAcquire();
                if (won.isPresent()) {
                    Replica replica = new Replica(advertised(o, o.port(), secure), Replica.Role.STANDBY);
                    GpupoolServer s = activate(plan, db, lease, won.getAsLong(), replica, null, out);
                    replica.serving();
                    return s;
                }
                if (System.nanoTime() > deadline) {
                    throw new SpecException("--db", "db", "another replica is active on this database (" + lease.lastSeen().url() + ")");
                }
                TimeUnit.MILLISECONDS.sleep(POLL_MS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            lease.close();
            db.close();
            throw new IllegalStateException("interrupted while waiting for the service lease");
        } catch (RuntimeException e) {
            lease.close();
            db.close();
            throw e;
        }
    }

    /**
     * Serves as the active replica of {@code epoch}: the lease kept, every commit fenced, the pool rebuilt from {@code warm}
     * (a standby's followed state) or else recovered from the store.
     */
    private static GpupoolServer activate(GpupoolServer.Plan plan, Database db, ServiceLease lease, long epoch, Replica replica,
                                          RecoveredState warm, PrintStream out) {
        replica.tookOver(epoch);
        LeaseKeeper keeper = new LeaseKeeper(lease, epoch, reason -> stepDown(out, reason));
        WriteFence fence = new WriteFence(epoch, () -> stepDown(out, "a commit was refused by the fencing token (epoch " + epoch + ")"));
        GpupoolServer s = GpupoolServer.serve(plan, db, fence, replica, keeper, warm, out);
        lease.advertise(replica.selfUrl());
        out.println("active replica: lease epoch " + epoch + " (" + replica.selfUrl() + ")");
        out.flush();
        return s;
    }

    /** A replica that lost its lease must not act again: it goes at once, without running shutdown hooks that might write. */
    private static void stepDown(PrintStream out, String reason) {
        out.println("gpupool server: stepping down: " + reason + "; exiting with code " + STEPPED_DOWN + " (started again, it rejoins as a standby)");
        out.flush();
        Runtime.getRuntime().halt(STEPPED_DOWN);
    }

    /** Where clients reach a replica: --advertise-url, else the scheme, this machine's name (or the address listened on) and the port. */
    static String advertised(ServerOptions o, int port, boolean secure) {
        if (o.advertiseUrl() != null) return o.advertiseUrl();
        return (secure ? "https" : "http") + "://" + displayHost(o.host()) + ":" + port;
    }

    private static String displayHost(String host) {
        if (!host.equals("0.0.0.0") && !host.equals("::")) return host.contains(":") ? "[" + host + "]" : host;
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }

    private static String holderId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "unknown-host";
        }
        return host + "/" + ProcessHandle.current().pid() + "/" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** The active server, or null while this replica is a standby. */
    public GpupoolServer active() { return active; }

    @Override
    public synchronized void close() {
        closed = true;
        if (poller != null) poller.interrupt();
        if (poller != null) {
            try {
                poller.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (standby != null) {
            standby.close();
            standbyLease.close();
            standbyDb.close();
        }
        if (active != null) active.close();
    }
}
