package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the crash tests check after a failure (a server or its database killed): no GPU holds more than its
 * capacity, in the pool the API shows nor in the store, and the engine holds exactly the grants the store holds.
 */
final class PoolChecks {
    private PoolChecks() {}

    /** The pool as {@code GET /api/v1/pool} shows it: every GPU within its capacity, its tasks adding up. */
    static void assertNoGpuOverCapacity(JsonNode pool, int gpus) {
        int seen = 0;
        for (JsonNode n : pool.path("nodes")) {
            for (JsonNode g : n.path("gpus")) {
                seen++;
                assertThat(g.path("usedMilli").asInt()).isBetween(0, 1000);
                assertThat(g.path("usedMemoryMib").asLong()).isLessThanOrEqualTo(g.path("memoryMib").asLong());
                int milli = 0;
                for (JsonNode t : g.path("tasks")) milli += t.path("milli").asInt();
                assertThat(milli).isEqualTo(g.path("usedMilli").asInt());
            }
        }
        assertThat(seen).isEqualTo(gpus);
    }

    /** The store: no GPU granted beyond its compute or memory ({@code gpuMemoryMib}), an exclusive grant alone. */
    static void assertStoreWithinCapacity(Connection c, long gpuMemoryMib) throws SQLException {
        ResultSet over = c.createStatement().executeQuery("SELECT node, gpu, SUM(milli), SUM(memory_mib), SUM(exclusive), COUNT(*) "
                + "FROM allocations GROUP BY node, gpu HAVING SUM(milli) > 1000 OR SUM(memory_mib) > " + gpuMemoryMib
                + " OR (SUM(exclusive) > 0 AND COUNT(*) > 1)");
        assertThat(over.next()).as("a GPU over capacity in the store").isFalse();
    }

    interface Source<T> {
        T get() throws Exception;
    }

    /**
     * The engine (its pool view, published every 250 ms) holds exactly the grants the store holds: what it
     * restored or kept placing matches what was committed. Waits up to 10 s for the view to catch up.
     */
    static void assertEngineHoldsTheStoresGrants(Source<JsonNode> pool, Connection store) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        List<String> engine;
        List<String> stored;
        do {
            stored = grants(store);
            engine = grants(pool.get());
            if (engine.equals(stored)) return;
            Thread.sleep(100);
        } while (System.nanoTime() < deadline);
        assertThat(engine).as("grants in the engine's pool view vs the store's allocations").isEqualTo(stored);
    }

    /** The grants on every GPU, "job node/gpu milli" sorted, as the pool shows them. */
    private static List<String> grants(JsonNode pool) {
        List<String> out = new ArrayList<>();
        for (JsonNode n : pool.path("nodes")) {
            for (JsonNode g : n.path("gpus")) {
                for (JsonNode t : g.path("tasks")) out.add(t.path("jobId").asText() + " " + n.path("name").asText() + "/" + g.path("index").asInt() + " " + t.path("milli").asInt());
            }
        }
        out.sort(null);
        return out;
    }

    /** The same from the store's allocations. */
    private static List<String> grants(Connection c) throws SQLException {
        List<String> out = new ArrayList<>();
        ResultSet rs = c.createStatement().executeQuery("SELECT job_id, node, gpu, milli FROM allocations");
        while (rs.next()) out.add(rs.getString(1) + " " + rs.getString(2) + "/" + rs.getInt(3) + " " + rs.getInt(4));
        out.sort(null);
        return out;
    }
}
