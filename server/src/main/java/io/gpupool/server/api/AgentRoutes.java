package io.gpupool.server.api;

import io.gpupool.agent.protocol.AgentProtocolVersion;
import io.gpupool.agent.protocol.DesiredState;
import io.gpupool.agent.protocol.LogChunk;
import io.gpupool.agent.protocol.LogOffset;
import io.gpupool.agent.protocol.NodeReport;
import io.gpupool.agent.protocol.RegisterRequest;
import io.gpupool.agent.protocol.Registration;
import io.gpupool.agent.protocol.ReportResponse;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.NodeSpec;
import io.gpupool.server.auth.Principal;
import io.gpupool.server.auth.Role;
import io.gpupool.server.auth.Tokens;
import io.gpupool.server.core.AgentSettings;
import io.gpupool.server.core.OutputLedger;
import io.gpupool.server.core.PoolService;
import io.gpupool.server.core.ServiceClock;
import io.gpupool.server.core.ServiceException;
import io.gpupool.server.core.Views;
import io.gpupool.store.Store;
import io.javalin.http.Context;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static io.gpupool.server.api.Requests.await;

/**
 * The node agents' two calls (docs/architecture.md, "Agent protocol"):
 * <ul>
 *   <li>{@code POST /api/v1/agent/register} with a join token (role agent): the node joins (or rejoins) and
 *       gets its own credential (role node), which acts for that node only;</li>
 *   <li>{@code POST /api/v1/agent/nodes/{name}/report} with the node's credential: telemetry, job statuses,
 *       output; the answer carries the node's desired state. A report with nothing to say may wait up to one
 *       report interval for the desired state to change (a long poll).</li>
 * </ul>
 */
final class AgentRoutes {
    private final PoolService pool;
    private final Store store;
    private final Tokens tokens;
    private final GpuCatalog catalog;
    private final ServiceClock clock;
    private final AgentSettings settings;

    AgentRoutes(PoolService pool, Store store, Tokens tokens, GpuCatalog catalog, ServiceClock clock, AgentSettings settings) {
        this.pool = pool;
        this.store = store;
        this.tokens = tokens;
        this.catalog = catalog;
        this.clock = clock;
        this.settings = settings;
    }

    void register(RouteTable r) {
        r.post("/api/v1/agent/register", this::registerNode);
        r.post("/api/v1/agent/nodes/{name}/report", this::report);
    }

    /**
     * Runs before the agent routes (and before authentication): every answer names the protocol version this server
     * speaks, so an agent of another version can say so; a call announcing another version is refused before anything
     * is read (an agent announcing none speaks version 1: {@link AgentProtocolVersion#UNANNOUNCED}).
     */
    static void checkProtocol(Context ctx) {
        ctx.header(AgentProtocolVersion.HEADER, Integer.toString(AgentProtocolVersion.CURRENT));
        int announced;
        try {
            announced = AgentProtocolVersion.parse(ctx.header(AgentProtocolVersion.HEADER));
        } catch (IllegalArgumentException e) {
            throw ServiceException.malformed(AgentProtocolVersion.HEADER, e.getMessage());
        }
        if (announced != AgentProtocolVersion.CURRENT) {
            throw ServiceException.invalid(AgentProtocolVersion.HEADER, AgentProtocolVersion.serverRefuses(announced, AgentProtocolVersion.CURRENT));
        }
    }

    private void registerNode(Context ctx) {
        Requests.require(ctx, "register nodes", Role.AGENT, Role.ADMIN);
        RegisterRequest req = AgentMessages.read(Requests.json(ctx, Requests.MAX_AGENT_BODY_BYTES), RegisterRequest.class);
        NodeSpec spec = AgentMessages.nodeSpec(req, catalog);
        Tokens.Minted credential = Tokens.mintForNode(spec.name(), clock.now());
        Views.Registered r = await(pool.registerAgent(spec, credential.row(), req.firstPendingSeq(), req.killGraceMs(), req.confinement(),
                req.accounts()));
        tokens.add(credential.row());
        if (r.revokedCredential() != null) tokens.remove(r.revokedCredential());
        AgentMessages.send(ctx, new Registration(r.node(), r.epoch(), r.reportIntervalMs(), r.nodeLostTimeoutMs(), credential.token(),
                r.leaseEpoch()));
    }

    private void report(Context ctx) {
        Principal p = Requests.require(ctx, "report for nodes (a node's own credential from its registration does)", Role.NODE);
        String node = ctx.pathParam("name");
        if (!p.actsFor(node)) {
            throw ServiceException.forbidden("this credential acts for node '" + p.node() + "' only, not '" + Requests.clip(node) + "'");
        }
        NodeReport report = AgentMessages.read(Requests.json(ctx, Requests.MAX_AGENT_BODY_BYTES), NodeReport.class);
        AgentMessages.check(report, node);
        // output of attempts the server never placed on this node (or of an earlier job with the id, before a restore of
        // the store) is acknowledged and dropped
        List<LogChunk> chunks = new ArrayList<>();
        List<LogOffset> dropped = new ArrayList<>();
        Map<OutputLedger.Key, Long> stored = new HashMap<>();
        for (LogChunk c : report.logs()) {
            if (c.jobId().length() > 32 || !store.attemptExists(c.jobId(), c.attempt(), node, c.submittedMs())) {
                dropped.add(new LogOffset(c.jobId(), c.attempt(), c.stream(), c.offset() + c.data().length, c.submittedMs()));
                continue;
            }
            chunks.add(c);
            OutputLedger.Key k = OutputLedger.key(c, node);
            stored.computeIfAbsent(k, x -> store.outputLength(x.jobId(), x.attempt(), x.node(), x.stream()));
        }
        NodeReport kept = dropped.isEmpty() ? report : report.withLogs(chunks);
        Views.Reported answer = await(pool.report(node, kept, stored));
        DesiredState desired = answer.desired();
        boolean applied = answer.leaseEpoch() == report.leaseEpoch(); // else the agent must hear of the new epoch at once
        if (desired == null && applied && report.waitMs() > 0 && report.statuses().isEmpty() && report.logs().isEmpty()) {
            desired = waitForChange(answer, node, report, Math.min(report.waitMs(), settings.maxWaitMs()));
        }
        List<LogOffset> acks = new ArrayList<>(answer.logAcks());
        acks.addAll(dropped);
        AgentMessages.send(ctx, new ReportResponse(answer.ackedStatusSeq(), desired, acks, answer.leaseEpoch(), settings.nodeLostTimeoutMs()));
    }

    /** A long poll: the node's next desired state if it changes within {@code waitMs}, else null. */
    private DesiredState waitForChange(Views.Reported answer, String node, NodeReport report, long waitMs) {
        try {
            answer.nextChange().get(waitMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return null;
        } catch (ExecutionException e) {
            // the change's commit failed: ask again below, which reports the store's state
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
        return await(pool.desired(node, report.appliedDesiredVersion()));
    }
}
