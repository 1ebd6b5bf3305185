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
        Database db = o.dbUrl() != null ? Database.open(o.dbUrl()) : Database.embedded(o.dataDir());
        Store store = new Store(db);
        try {
            RecoveredState recovered = store.recover();
            ServiceClock clock = new ServiceClock();
            Tokens tokens = new Tokens();
            recovered.tokens().forEach(tokens::add);
            String shown = bootstrapAdmin(o, store, tokens, clock, out);
            GpuTelemetry telemetry = new GpuTelemetry();
            ServiceMetrics metrics = new ServiceMetrics(telemetry);
            EventHub hub = new EventHub();
            PoolService pool = new PoolService(recovered, staticNodes, defaults, o.agents(), store.writer(), catalog, telemetry, clock, metrics, hub::publish);
            hub.attach(pool);
            RuntimeLearning learning;
            try {
                if (fileTree != null) out.println(StartConfig.apply(o.config(), fileTree.withPredictor(new PoolConfig.Predictor(kind)), pool));
                learning = RuntimeLearning.start(kind, pool.settings().join().toConfig(Map.of()).defaultRuntimeMs(), store, pool);
            } catch (RuntimeException e) {
                pool.close();
                throw e;
            }
            metrics.attach(pool::snapshot, store.writer());
            ApiServer api = new ApiServer(o.host(), o.port(), pool, store, tokens, new RateLimiter(o.rateLimit()), metrics, hub, catalog,
                    clock, o.agents(), tls, o.allowRootJobs()).start();
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
            throw e;
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
    }
}
