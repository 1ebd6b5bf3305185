package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.engine.config.PoolConfig;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;
import io.gpupool.server.core.ConfigChange;
import io.gpupool.server.core.NodeCodec;
import io.gpupool.server.core.ServiceException;
import io.gpupool.sim.history.HistoryCsv;
import io.gpupool.sim.history.RecordedJob;
import io.gpupool.sim.trace.TraceContext;

import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where {@code history export} and {@code simulate --history} get a pool's history: GET /api/v1/history (the trace CSV,
 * the server's nodes in its engine's order and its configuration tree), or an exported CSV with the pool file
 * {@code history export --pool} wrote.
 */
final class HistorySource {
    /** A history ready to compare: its jobs, the pool and configuration they ran on, and the policy that ran them (null: unknown). */
    record Loaded(List<RecordedJob> jobs, ClusterSpec cluster, PoolConfig config, String policy) {}

    /** The pool a history was recorded on. */
    record Pool(ClusterSpec cluster, PoolConfig config, String policy) {}

    private HistorySource() {}

    static JsonNode fetch(ApiClient api, String since, String until, String tenant) {
        List<String> q = new ArrayList<>();
        add(q, "since", since);
        add(q, "until", until);
        add(q, "tenant", tenant);
        return api.get("/api/v1/history" + (q.isEmpty() ? "" : "?" + String.join("&", q)));
    }

    private static void add(List<String> q, String name, String value) {
        if (value != null) q.add(name + "=" + URLEncoder.encode(value, StandardCharsets.UTF_8));
    }

    /** The server's answer: its jobs (the CSV read as a file is), nodes and configuration. */
    static Loaded fromServer(JsonNode r, String where) {
        Pool pool = pool(r, where);
        Path tmp = null;
        try {
            tmp = Files.createTempFile("gpupool-history-", ".csv");
            Files.writeString(tmp, r.path("trace").asText());
            return new Loaded(HistoryCsv.read(tmp, TraceContext.forPool(GpuCatalog.standard(), pool.cluster())), pool.cluster(), pool.config(), pool.policy());
        } catch (IOException e) {
            throw new SpecException(where, null, "cannot keep the history in a temporary file: " + e.getMessage());
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // a temporary file left behind is harmless
                }
            }
        }
    }

    /** An exported CSV on the pool of a {@code --pool} file (or a SPEC's, with {@code config}). */
    static Loaded fromFile(Path csv, Pool pool) {
        if (!Files.isRegularFile(csv)) throw new SpecException("--history", "history", "no such file: " + csv);
        return new Loaded(HistoryCsv.read(csv, TraceContext.forPool(GpuCatalog.standard(), pool.cluster())), pool.cluster(), pool.config(), pool.policy());
    }

    /** {@code {"policy", "config", "nodes"}}: the server's answer, or the file {@code history export --pool} wrote. */
    static Pool pool(JsonNode r, String where) {
        List<NodeSpec> nodes = new ArrayList<>();
        JsonNode list = r.path("nodes");
        if (!list.isArray() || list.isEmpty()) throw new SpecException(where, "nodes", "the pool has no nodes to replay the history on");
        for (int i = 0; i < list.size(); i++) {
            try {
                nodes.add(NodeCodec.parse(list.get(i), GpuCatalog.standard()));
            } catch (ServiceException e) {
                throw new SpecException(where, "nodes[" + i + "]." + e.field(), e.rule());
            }
        }
        if (!r.path("config").isObject()) throw new SpecException(where, "config", "must be the configuration tree (GET /api/v1/config)");
        PoolConfig config = ConfigChange.READER.readYaml(r.path("config").toString(), where, PoolConfig.defaults("fcfs"));
        String policy = r.path("policy").isTextual() ? r.path("policy").asText() : config.policy().name();
        return new Pool(new ClusterSpec(nodes), config, policy);
    }

    static Pool poolFile(Path file) {
        if (!Files.isRegularFile(file)) throw new SpecException("--pool", "pool", "no such file: " + file);
        try {
            return pool(Json.MAPPER.readTree(Files.readString(file)), file.toString());
        } catch (IOException e) {
            throw new SpecException(file.toString(), null, "is not the JSON that history export --pool writes: " + e.getMessage());
        }
    }

    /** One line on what the history holds and what it left out. */
    static String summary(JsonNode r) {
        JsonNode left = r.path("leftOut");
        return "history " + r.path("since").asText() + " .. " + r.path("until").asText() + (r.path("tenant").isTextual() ? " (tenant " + r.path("tenant").asText() + ")" : "")
                + ": " + r.path("jobs").asInt() + " finished jobs, time 0 = " + r.path("origin").asText() + "; left out: "
                + left.path("unfinished").asLong() + " still queued or running, " + left.path("neverStarted").asLong() + " that never started"
                + (left.path("unreadable").asLong() > 0 ? ", " + left.path("unreadable").asLong() + " whose record does not match their request" : "");
    }
}
