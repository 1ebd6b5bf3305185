package io.gpupool.server;

import io.gpupool.engine.config.PoolConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.NodeSpec;
import io.gpupool.server.api.ApiServer;
import io.gpupool.server.api.EventHub;
import io.gpupool.server.auth.RateLimiter;
import io.gpupool.server.auth.Role;
import io.gpupool.server.auth.Tokens;
import io.gpupool.server.core.GpuTelemetry;
import io.gpupool.server.core.PoolService;
import io.gpupool.server.core.RuntimeLearning;
import io.gpupool.server.core.SchedulerSettings;
import io.gpupool.server.core.ServiceClock;
import io.gpupool.server.demo.DemoDriver;
import io.gpupool.server.metrics.ServiceMetrics;
import io.gpupool.store.Database;
import io.gpupool.store.RecoveredState;
import io.gpupool.store.Store;
import io.gpupool.store.TokenRow;
import io.gpupool.store.Write;

import io.gpupool.server.tls.TlsFiles;
import io.gpupool.server.ha.Replica;
import io.gpupool.server.ha.SqliteLock;
import io.gpupool.store.WriteFence;

import java.io.PrintStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The running service: store, engine loop, HTTP API, SSE, metrics and (with --demo) the demo driver,
 * wired together. {@link #start} recovers everything from the store first, so a restarted server carries
 * on where the last one stopped.
 */
public final class GpupoolServer implements AutoCloseable {
    private final Store store;
    private final PoolService pool;
    private final EventHub hub;
    private final ApiServer api;
    private final DemoDriver demo;
    private final String dashboardToken;
    private final String host;
    private RuntimeLearning predictor;
    private Replica replica;
    private String startPhases;
    private AutoCloseable guard;

    private GpupoolServer(Store store, PoolService pool, EventHub hub, ApiServer api, DemoDriver demo, String dashboardToken, String host) {
        this.host = host;
        this.store = store;
        this.pool = pool;
        this.hub = hub;
        this.api = api;
        this.demo = demo;
        this.dashboardToken = dashboardToken;
    }

    /** Opens the store, recovers, starts serving; prints where to go (and a new admin token once) to {@code out}. */
    public static GpupoolServer start(ServerOptions o, PrintStream out) {
        return start(o, null, out);
    }

    /**
     * As {@link #start(ServerOptions, PrintStream)}, with the run-time predictor {@code predictor} (history, gbt,
     * global-median, none; null: the --config file's, else history).
     */
    public static GpupoolServer start(ServerOptions o, String predictor, PrintStream out) {
        Plan plan = plan(o, predictor);
        if (o.dbUrl() == null || o.dbUrl().startsWith("jdbc:sqlite:")) {
            // locked before the database is opened (and migrated): a second server on the file changes nothing
            SqliteLock lock = sqliteLock(o);
            Database db;
            try {
                db = o.dbUrl() != null ? Database.open(o.dbUrl()) : Database.embedded(o.dataDir());
            } catch (RuntimeException e) {
                closeQuietly(lock);
                throw e;
            }
            return serve(plan, db, null, Replica.single(ReplicatedServer.advertised(o, o.port(), plan.tls() != null)), lock, null, out);
        }
        Database db = Database.open(o.dbUrl());
        // PostgreSQL: this server becomes the active replica before it writes anything (one that is already active elsewhere
        // is waited for; ReplicatedServer serves as a standby meanwhile instead)
        return ReplicatedServer.activeWhenLeased(o, plan, db, out);
    }

    /** What a start reads and checks before it opens the store: the --config file, the cluster, the TLS files. */
    record Plan(ServerOptions o, GpuCatalog catalog, PoolConfig fileTree, String kind, SchedulerSettings defaults,
                Map<NodeSpec, String> staticNodes, List<NodeSpec> demoNodes, String spec, TlsFiles.Identity tls) {
        Plan withOptions(ServerOptions other) {
            return new Plan(other, catalog, fileTree, kind, defaults, staticNodes, demoNodes, spec, tls);
        }
    }

    static Plan plan(ServerOptions o, String predictor) {
        GpuCatalog catalog = GpuCatalog.standard();
        // the --config file first: a bad one stops the start before the store is opened
        PoolConfig fileTree = o.config() == null ? null : StartConfig.read(o.config(), o.policy());
        String kind = predictor != null ? predictor : fileTree != null ? fileTree.predictorOr(RuntimeLearning.DEFAULT_KIND) : RuntimeLearning.DEFAULT_KIND;
        SchedulerSettings defaults = (fileTree != null ? new SchedulerSettings(fileTree)
                : SchedulerSettings.defaults(StartConfig.policy(o.policy() == null ? "fair-share" : o.policy()))).withPredictor(kind);
        Map<NodeSpec, String> staticNodes = new LinkedHashMap<>();
        List<NodeSpec> demoNodes = List.of();
        String spec = o.cluster() != null ? o.cluster() : o.demo() ? ServerOptions.DEMO_CLUSTER : null;
        if (spec != null) {
            ClusterSpec cs = ClusterSpecs.parse(spec, catalog);
            // the demo's nodes are registered by its agents; otherwise they are static nodes without an agent
            if (o.demo()) demoNodes = cs.nodes();
            else for (NodeSpec n : cs.nodes()) staticNodes.put(n, "static");
        }
        // the TLS files first: a bad one stops the start before anything is opened
        TlsFiles.Identity tls = o.tls() == null ? null : TlsFiles.load(o.tls().certFile(), o.tls().keyFile());
        return new Plan(o, catalog, fileTree, kind, defaults, staticNodes, demoNodes, spec, tls);
    }

    /** The lock on the SQLite file this server uses (none for an in-memory database). */
    private static SqliteLock sqliteLock(ServerOptions o) {
        if (o.dbUrl() == null) {
            try {
                java.nio.file.Files.createDirectories(o.dataDir());
            } catch (java.io.IOException e) {
                throw new io.gpupool.model.SpecException("--data " + o.dataDir(), "data", "cannot create the data directory: " + e.getMessage());
            }
            return SqliteLock.acquire(o.dataDir().toAbsolutePath().resolve(Database.EMBEDDED_FILE));
        }
        String file = o.dbUrl().substring("jdbc:sqlite:".length());
        int q = file.indexOf('?');
        if (q >= 0) file = file.substring(0, q);
        if (file.isEmpty() || file.startsWith(":memory:") || file.startsWith("file::memory:")) return null;
        if (file.startsWith("file:")) file = file.substring("file:".length());
        return SqliteLock.acquire(java.nio.file.Path.of(file).toAbsolutePath());
    }

    /**
     * Recovers the pool from the store and starts serving: the active replica (or the one server of an embedded store).
     * {@code fence}: the fencing token every commit carries (null on SQLite); {@code guard}: the SQLite lock or the lease
     * keeper, closed last; {@code warm}: the state a standby followed, caught up after the takeover (null: read it all back).
     */
    static GpupoolServer serve(Plan plan, Database db, WriteFence fence, Replica replica, AutoCloseable guard, RecoveredState warm, PrintStream out) {
        ServerOptions o = plan.o();
        GpuCatalog catalog = plan.catalog();
        PoolConfig fileTree = plan.fileTree();
        String kind = plan.kind();
        SchedulerSettings defaults = plan.defaults();
        Map<NodeSpec, String> staticNodes = plan.staticNodes();
        List<NodeSpec> demoNodes = plan.demoNodes();
        String spec = plan.spec();
        TlsFiles.Identity tls = plan.tls();
        Store store = new Store(db, fence);
        StartPhases phases = new StartPhases();
        try {
            RecoveredState recovered = warm != null ? warm : store.recover();
            phases.done(warm != null ? "state" : "recover");
            ServiceClock clock = new ServiceClock();
            Tokens tokens = new Tokens();
            recovered.tokens().forEach(tokens::add);
            String shown = bootstrapAdmin(o, store, tokens, clock, out);
            phases.done("tokens");
            GpuTelemetry telemetry = new GpuTelemetry();
            ServiceMetrics metrics = new ServiceMetrics(telemetry);
            EventHub hub = new EventHub();
            phases.done("metrics");
            PoolService pool = new PoolService(recovered, staticNodes, defaults, o.agents(), store.writer(), catalog, telemetry, clock, metrics, hub::publish);
            hub.attach(pool);
            phases.done("engine");
            RuntimeLearning learning;
            try {
                if (fileTree != null) out.println(StartConfig.apply(o.config(), fileTree.withPredictor(new PoolConfig.Predictor(kind)), pool));
                learning = RuntimeLearning.start(kind, pool.settings().join().toConfig(Map.of()).defaultRuntimeMs(), store, pool);
            } catch (RuntimeException e) {
                pool.close();
                throw e;
            }
            phases.done("predictor");
            metrics.attach(pool::snapshot, store.writer());
            ApiServer api = new ApiServer(o.host(), o.port(), pool, store, tokens, new RateLimiter(o.rateLimit()), metrics, hub, catalog,
                    clock, o.agents(), tls, o.allowRootJobs(), replica).start();
            phases.done("http");
            String host = o.host().equals("0.0.0.0") ? "localhost" : o.host();
            String base = api.scheme() + "://" + host + ":" + api.port();
            DemoDriver demo = null;
            if (o.demo()) {
                boolean anyAddress = o.host().equals("0.0.0.0") || o.host().equals("::");
                // over TLS the demo's agents trust the server's own certificate, by a name it holds (localhost, as docs/install.md makes it)
                String self = api.scheme() + "://" + (anyAddress ? (tls == null ? "127.0.0.1" : "localhost") : o.host()) + ":" + api.port();
                try {
                    demo = DemoDriver.start(pool, store.writer(), tokens, clock, self, tls == null ? null : o.tls().certFile(), demoNodes,
                            o.dataDir().resolve("demo-agents"), o.demoSeed());
                } catch (RuntimeException e) {
                    api.close();
                    learning.close();
                    hub.close();
                    pool.close();
                    throw e;
                }
            }
            GpupoolServer s = new GpupoolServer(store, pool, hub, api, demo, shown, o.host());
            s.predictor = learning;
            s.replica = replica;
            s.startPhases = phases.toString();
            s.guard = guard;
            replica.advertise(ReplicatedServer.advertised(o, api.port(), tls != null));
            out.println("gpupool server listening on " + base + " (store: " + db.describe() + ", "
                    + recovered.activeJobs().size() + " active jobs restored)");
            if (tls == null && !loopbackOnly(o.host())) {
                out.println("warning: plain HTTP on " + o.host() + ", reachable from other machines: API tokens, join tokens and job commands "
                        + "cross the network in the clear; serve HTTPS with --tls-cert FILE --tls-key FILE (docs/install.md, \"TLS\"), "
                        + "or listen on this machine only with --host 127.0.0.1");
            }
            if (demo != null) out.println("demo: " + demoNodes.size() + " node agents in this process (" + spec + ", fake GPUs) run synthetic jobs "
                    + "from tenants " + String.join(", ", DemoDriver.TENANTS) + " as real processes (work directories under "
                    + o.dataDir().resolve("demo-agents") + ")");
            if (shown != null) out.println("dashboard: " + base + "/#token=" + shown);
            else out.println("dashboard: " + base + "/ (paste an API token)");
            out.flush();
            return s;
        } catch (RuntimeException e) {
            store.close();
            closeQuietly(guard);
            throw e;
        }
    }

    /**
     * A standby's rehearsal of a takeover: builds the engine from the state it follows ({@code recovered}) as {@link #serve}
     * does, then drops it. It writes nothing (its writer's fencing token is an epoch no replica holds, so its first commit is
     * refused) and answers nobody (no HTTP). What it leaves warm is the JVM's: the classes of the engine and the policies
     * loaded and their code compiled, so the real takeover does not pay for that. Returns how long it took.
     */
    static long rehearse(Plan plan, Database db, Replica replica, RecoveredState recovered) {
        long t0 = System.nanoTime();
        Store store = new Store(db, WriteFence.rehearsal());
        try {
            GpuTelemetry telemetry = new GpuTelemetry();
            ServiceMetrics metrics = new ServiceMetrics(telemetry);
            ServiceClock clock = new ServiceClock();
            EventHub hub = new EventHub();
            PoolService pool = new PoolService(recovered, plan.staticNodes(), plan.defaults(), plan.o().agents(), store.writer(), plan.catalog(),
                    telemetry, clock, metrics, changes -> {});
            pool.snapshot();
            // the HTTP routes built, not started (no port is opened)
            new ApiServer(plan.o().host(), 0, pool, store, new Tokens(), new RateLimiter(0), metrics, hub, plan.catalog(), clock, plan.o().agents(),
                    plan.tls(), plan.o().allowRootJobs(), replica);
            hub.close();
            pool.close();
        } finally {
            store.writer().close();   // the database stays open: it is the standby's
        }
        return java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    }

    /** The durations of a start's phases, for the line a takeover prints. */
    private static final class StartPhases {
        private final StringBuilder text = new StringBuilder();
        private long last = System.nanoTime();

        void done(String phase) {
            long now = System.nanoTime();
            if (!text.isEmpty()) text.append(", ");
            text.append(phase).append(' ').append(java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(now - last)).append(" ms");
            last = now;
        }

        @Override
        public String toString() { return text.toString(); }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) return;
        try {
            c.close();
        } catch (Exception ignored) {
            // closing on a failed start: the start's own failure is the one to report
        }
    }

    /** Whether {@code host} is reachable from this machine only (a loopback address); a name that does not resolve is not. */
    static boolean loopbackOnly(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * The first admin token: the one given (--admin-token / GPUPOOL_ADMIN_TOKEN) is stored if new; without one,
     * a token is minted and printed once when no admin exists. The demo mints a dashboard token every start.
     * Returns a token to show in the dashboard link, or null.
     */
    private static String bootstrapAdmin(ServerOptions o, Store store, Tokens tokens, ServiceClock clock, PrintStream out) {
        if (o.adminToken() != null) {
            if (o.adminToken().length() < 16) {
                throw new io.gpupool.model.SpecException("--admin-token", "admin-token", "must be at least 16 characters");
            }
            if (!tokens.known(o.adminToken())) {
                TokenRow row = Tokens.fromGiven(o.adminToken(), Role.ADMIN, "given at start", clock.now());
                store.writer().submit(new Write.PutToken(row)).join();
                tokens.add(row);
            }
            return o.adminToken();
        }
        if (!tokens.hasAdmin() || o.demo()) {
            Tokens.Minted m = Tokens.mint(Role.ADMIN, null, o.demo() ? "demo dashboard" : "bootstrap", clock.now());
            store.writer().submit(new Write.PutToken(m.row())).join();
            tokens.add(m.row());
            out.println("admin token (shown once, keep it): " + m.token());
            return m.token();
        }
        return null;
    }

    public int port() { return api.port(); }
    /** The base URL clients on this machine use, e.g. {@code https://localhost:8443}. */
    public String url() { return api.scheme() + "://" + (host.equals("0.0.0.0") || host.equals("::") ? "localhost" : host) + ":" + api.port(); }
    public PoolService pool() { return pool; }
    public Store store() { return store; }
    /** The learned run-time predictor of qssf and backfill. */
    public RuntimeLearning predictor() { return predictor; }
    public ApiServer api() { return api; }
    /**
     * How long each phase of the start took, e.g. {@code recover 120 ms, engine 30 ms, predictor 5 ms, http 80 ms} ({@code state}
     * rather than {@code recover}: a standby's followed state, caught up).
     */
    public String startPhases() { return startPhases; }

    /** Active or standby, and the lease epoch this server holds. */
    public Replica replica() { return replica; }
    /** The admin token this start printed or was given, if any. */
    public String dashboardToken() { return dashboardToken; }

    @Override
    public void close() {
        if (demo != null) demo.close();
        api.close();
        hub.close();
        if (predictor != null) predictor.close();
        pool.close();
        store.close();
        closeQuietly(guard);   // last: a standby takes over only once everything this replica took in is committed
    }
}
