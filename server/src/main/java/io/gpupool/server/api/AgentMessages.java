package io.gpupool.server.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import io.gpupool.agent.protocol.AccountIsolation;
import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GpuSample;
import io.gpupool.agent.protocol.JobStatusReport;
import io.gpupool.agent.protocol.LogChunk;
import io.gpupool.agent.protocol.NodeConfinement;
import io.gpupool.agent.protocol.NodeInventory;
import io.gpupool.agent.protocol.NodeReport;
import io.gpupool.agent.protocol.ProtocolJson;
import io.gpupool.agent.protocol.RegisterRequest;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuDevice;
import io.gpupool.model.GpuModel;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;
import io.gpupool.server.core.ServiceException;
import io.javalin.http.Context;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The agent protocol's messages on the server: read with the agent's own JSON form (snake_case; unknown
 * fields ignored, so a newer agent may add some), then checked field by field. A broken rule is a
 * {@link ServiceException} naming the field, e.g. {@code statuses[3].phase}; nothing has been applied then.
 */
final class AgentMessages {
    static final int MAX_STATUSES = 10_000;
    static final int MAX_CHUNKS = 10_000;
    static final int MAX_RUNNING = 100_000;
    static final long MAX_WAIT_MS = 600_000;
    /** Missing or null numbers read as 0 and missing fields as null, so an older agent's message (without newer fields) still reads. */
    private static final ObjectReader READER = ProtocolJson.MAPPER.reader();

    private AgentMessages() {}

    static <T> T read(JsonNode body, Class<T> type) {
        if (body == null || !body.isObject()) throw ServiceException.malformed("body", "must be a JSON object");
        try {
            return READER.treeToValue(body, type);
        } catch (JsonMappingException e) {
            String where = path(e);
            Throwable cause = e.getCause();
            if (cause instanceof SpecException s) throw ServiceException.invalid(where.isEmpty() ? s.field() : where, s.getMessage());
            if (cause instanceof NullPointerException) throw ServiceException.malformed(where.isEmpty() ? "body" : where, "a required list is missing or null");
            throw ServiceException.malformed(where.isEmpty() ? "body" : where, Requests.clip(e.getOriginalMessage()));
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw ServiceException.malformed("body", Requests.clip(e.getMessage()));
        }
    }

    static void send(Context ctx, Object body) {
        try {
            ctx.status(200).contentType("application/json").result(ProtocolJson.MAPPER.writeValueAsString(body));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot render " + body.getClass().getSimpleName(), e);
        }
    }

    /** {@code statuses[3].phase} from Jackson's path. */
    private static String path(JsonMappingException e) {
        StringBuilder sb = new StringBuilder();
        for (JsonMappingException.Reference r : e.getPath()) {
            if (r.getIndex() >= 0) sb.append('[').append(r.getIndex()).append(']');
            else if (r.getFieldName() != null) sb.append(sb.isEmpty() ? "" : ".").append(r.getFieldName());
        }
        return sb.toString();
    }

    /**
     * The node as the engine sees it, from the agent's inventory: GPUs in index order, each a catalog model
     * (by its model id, else its product string), NVLink domains from the peers.
     */
    static NodeSpec nodeSpec(RegisterRequest r, GpuCatalog catalog) {
        String name = r.nodeName();
        if (name == null || !name.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,252}")) {
            throw ServiceException.invalid("node_name", "must be 1-253 letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
        if (r.agentVersion() != null && r.agentVersion().length() > 64) throw ServiceException.invalid("agent_version", "must be at most 64 characters");
        if (r.running().size() > MAX_RUNNING) throw ServiceException.invalid("running", "at most " + MAX_RUNNING + " entries");
        if (r.firstPendingSeq() < -1) throw ServiceException.invalid("first_pending_seq", "must be >= -1");
        checkKillGrace(r.killGraceMs());
        checkAccounts(r.accounts());
        checkConfinement(r.confinement());
        NodeInventory inv = r.inventory();
        if (inv == null) throw ServiceException.invalid("inventory", "is required");
        List<GpuInfo> gpus = inv.gpus();
        if (gpus.isEmpty()) throw ServiceException.invalid("inventory.gpus", "a GPU node needs at least one GPU");
        if (gpus.size() > ClusterSpecs.MAX_GPUS_PER_NODE) throw ServiceException.invalid("inventory.gpus", "at most " + ClusterSpecs.MAX_GPUS_PER_NODE + " GPUs");
        if (inv.cpuCount() < 0 || inv.memoryMib() < 0) throw ServiceException.invalid("inventory", "cpu_count and memory_mib must be >= 0");
        List<GpuDevice> devices = new ArrayList<>();
        Set<String> uuids = new HashSet<>();
        for (int i = 0; i < gpus.size(); i++) {
            GpuInfo g = gpus.get(i);
            String where = "inventory.gpus[" + i + "]";
            if (g == null) throw ServiceException.malformed(where, "must be an object");
            if (g.index() != i) throw ServiceException.invalid(where + ".index", "GPU indices must be 0..n-1 in order, got " + g.index());
            if (g.uuid() == null || g.uuid().isBlank() || g.uuid().length() > 128 || g.uuid().contains(",")) {
                throw ServiceException.invalid(where + ".uuid", "must be 1-128 characters without ','");
            }
            if (!uuids.add(g.uuid())) throw ServiceException.invalid(where + ".uuid", "GPU " + g.uuid() + " is listed twice");
            for (int p : g.nvlinkPeers()) {
                if (p < 0 || p >= gpus.size() || p == i) throw ServiceException.invalid(where + ".nvlink_peers", "peer " + p + " is not another GPU of this node");
            }
            if (g.minor() != null && (g.minor() < 0 || g.minor() > MAX_MINOR)) throw ServiceException.invalid(where + ".minor", "must be in 0.." + MAX_MINOR);
            if (g.modelId() == null && g.productName() == null) {
                throw ServiceException.invalid(where + ".product_name", "is required (or a model_id): the GPU's model from the catalog");
            }
            GpuModel model = (g.modelId() == null ? java.util.Optional.<GpuModel>empty() : catalog.find(g.modelId()))
                    .or(() -> g.productName() == null ? java.util.Optional.empty() : catalog.find(g.productName()))
                    .orElseThrow(() -> ServiceException.invalid(where + ".product_name", "the GPU catalog does not know '"
                            + Requests.clip(String.valueOf(g.productName())) + "'; see `gpupool catalog` for the models"));
            devices.add(new GpuDevice(i, g.uuid(), model, true));
        }
        try {
            return new NodeSpec(name, devices, inv.cpuCount() * 1000L, inv.memoryMib(), inv.nvlinkDomains(), 1.0,
                    NodeSpec.DEFAULT_SPLIT_COUNT, Map.of());
        } catch (SpecException e) {
            throw ServiceException.invalid("inventory." + e.field(), e.getMessage());
        }
    }

    /** Checks a report's form; the node's own facts (its GPU indices) are checked by the engine loop. */
    static void check(NodeReport r, String node) {
        if (!node.equals(r.nodeId())) throw ServiceException.invalid("node_id", "must be the node of the path ('" + Requests.clip(node) + "')");
        if (r.waitMs() < 0 || r.waitMs() > MAX_WAIT_MS) throw ServiceException.invalid("wait_ms", "must be in 0.." + MAX_WAIT_MS);
        if (r.leaseEpoch() < 0) throw ServiceException.invalid("lease_epoch", "must be >= 0");
        checkKillGrace(r.killGraceMs());
        if (r.accounts() != null) checkAccounts(r.accounts());
        if (r.gpus().size() > ClusterSpecs.MAX_GPUS_PER_NODE) throw ServiceException.invalid("gpus", "at most " + ClusterSpecs.MAX_GPUS_PER_NODE + " readings");
        for (int i = 0; i < r.gpus().size(); i++) {
            GpuSample g = r.gpus().get(i);
            if (g == null) throw ServiceException.malformed("gpus[" + i + "]", "must be an object");
            if (g.utilizationPercent() != null && (g.utilizationPercent() < 0 || g.utilizationPercent() > 100)) {
                throw ServiceException.invalid("gpus[" + i + "].utilization_percent", "must be in 0..100");
            }
            if ((g.memoryUsedMib() != null && g.memoryUsedMib() < 0) || (g.memoryTotalMib() != null && g.memoryTotalMib() < 0)) {
                throw ServiceException.invalid("gpus[" + i + "]", "memory figures must be >= 0");
            }
            if (g.powerWatts() != null && !(g.powerWatts() >= 0 && g.powerWatts() <= 100_000)) throw ServiceException.invalid("gpus[" + i + "].power_watts", "must be in 0..100000");
        }
        if (r.running().size() > MAX_RUNNING) throw ServiceException.invalid("running", "at most " + MAX_RUNNING + " entries");
        if (r.statuses().size() > MAX_STATUSES) throw ServiceException.invalid("statuses", "at most " + MAX_STATUSES + " per report");
        long lastSeq = Long.MIN_VALUE;
        for (int i = 0; i < r.statuses().size(); i++) {
            JobStatusReport s = r.statuses().get(i);
            String where = "statuses[" + i + "]";
            if (s == null) throw ServiceException.malformed(where, "must be an object");
            if (s.seq() < 0 || s.seq() <= lastSeq) throw ServiceException.invalid(where + ".seq", "must be >= 0 and increase, got " + s.seq());
            lastSeq = s.seq();
            checkJob(where, s.jobId(), s.attempt(), s.submittedMs());
            if (s.phase() == null) throw ServiceException.invalid(where + ".phase", "is required");
            if (s.message() != null && s.message().length() > 8192) throw ServiceException.invalid(where + ".message", "must be at most 8192 characters");
        }
        if (r.logs().size() > MAX_CHUNKS) throw ServiceException.invalid("logs", "at most " + MAX_CHUNKS + " per report");
        for (int i = 0; i < r.logs().size(); i++) {
            LogChunk c = r.logs().get(i);
            String where = "logs[" + i + "]";
            if (c == null) throw ServiceException.malformed(where, "must be an object");
            checkJob(where, c.jobId(), c.attempt(), c.submittedMs());
            if (c.stream() == null) throw ServiceException.invalid(where + ".stream", "is required (STDOUT or STDERR)");
            if (c.offset() < 0) throw ServiceException.invalid(where + ".offset", "must be >= 0");
            if (c.data() == null) throw ServiceException.invalid(where + ".data", "is required (base64; empty for a chunk that only marks the end)");
        }
    }

    private static void checkJob(String where, String jobId, int attempt, Long submittedMs) {
        if (jobId == null || jobId.isBlank() || jobId.length() > 128) throw ServiceException.invalid(where + ".job_id", "must be 1-128 characters");
        if (attempt < 0) throw ServiceException.invalid(where + ".attempt", "must be >= 0");
        if (submittedMs != null && submittedMs < 0) throw ServiceException.invalid(where + ".submitted_ms", "must be >= 0 (or absent: not known)");
    }

    /** Device minor numbers are 20 bits. */
    static final int MAX_MINOR = (1 << 20) - 1;
    static final int MAX_CONFINEMENT_ITEMS = 32;
    static final int MAX_CONFINEMENT_TEXT = 512;

    /** What a node says it enforces is shown to every user: bounded, and in the agent's own terms. */
    private static void checkConfinement(NodeConfinement c) {
        if (c == null) return; // an older agent
        if (c.mode() == null || !List.of("v1", "v2", "hybrid", "none").contains(c.mode())) {
            throw ServiceException.invalid("confinement.mode", "must be v1, v2, hybrid or none");
        }
        for (String field : List.of("enforced", "missing")) {
            List<String> items = field.equals("enforced") ? c.enforced() : c.missing();
            if (items.size() > MAX_CONFINEMENT_ITEMS) throw ServiceException.invalid("confinement." + field, "at most " + MAX_CONFINEMENT_ITEMS + " entries");
            for (int i = 0; i < items.size(); i++) {
                String s = items.get(i);
                if (s == null || s.isBlank() || s.length() > MAX_CONFINEMENT_TEXT) {
                    throw ServiceException.invalid("confinement." + field + "[" + i + "]", "must be 1-" + MAX_CONFINEMENT_TEXT + " characters");
                }
            }
        }
        if (c.reason() != null && c.reason().length() > 2 * MAX_CONFINEMENT_TEXT) {
            throw ServiceException.invalid("confinement.reason", "must be at most " + 2 * MAX_CONFINEMENT_TEXT + " characters");
        }
    }

    /** The server waits this long for a lost node's fenced jobs to die: an agent may not make it wait for hours. */
    static final long MAX_KILL_GRACE_MS = 3_600_000;

    /** Accounts a node may list as missing: one per distinct account its jobs asked for, within reason. */
    static final int MAX_MISSING_ACCOUNTS = 1000;

    private static void checkAccounts(AccountIsolation a) {
        if (a.reason() != null && a.reason().length() > 1000) throw ServiceException.invalid("accounts.reason", "must be at most 1000 characters");
        if (a.missing().size() > MAX_MISSING_ACCOUNTS) throw ServiceException.invalid("accounts.missing", "at most " + MAX_MISSING_ACCOUNTS + " accounts");
        for (int i = 0; i < a.missing().size(); i++) {
            String name = a.missing().get(i);
            if (name == null || name.isEmpty() || name.length() > 64) throw ServiceException.invalid("accounts.missing[" + i + "]", "must be 1-64 characters");
        }
    }

    private static void checkKillGrace(long ms) {
        if (ms < 0 || ms > MAX_KILL_GRACE_MS) throw ServiceException.invalid("kill_grace_ms", "must be in 0.." + MAX_KILL_GRACE_MS + " (0: not given)");
    }
}
