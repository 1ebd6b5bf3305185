package io.gpupool.agent.node;

import io.gpupool.agent.AgentJson;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * The agent's small durable state, {@code agent-state.json} in its work directory: the node id the server
 * gave it, the server's store epoch, the newest desired-state version applied, and how much of each log
 * stream the server holds. Rewritten atomically on every change.
 */
public final class AgentState {

    /** The file's content. */
    public record Snapshot(String nodeId, String serverEpoch, long appliedDesiredVersion, Map<String, Long> logOffsets) {
        public Snapshot {
            logOffsets = logOffsets == null ? Map.of() : Map.copyOf(logOffsets);
        }
    }

    private final Path file;
    private String nodeId;
    private String serverEpoch;
    private long appliedDesiredVersion = -1;
    private final Map<String, Long> logOffsets = new TreeMap<>();

    public AgentState(Path workDir) throws IOException {
        Files.createDirectories(workDir);
        this.file = workDir.resolve("agent-state.json");
        if (Files.exists(file)) {
            Snapshot s = AgentJson.read(file, Snapshot.class);
            nodeId = s.nodeId();
            serverEpoch = s.serverEpoch();
            appliedDesiredVersion = s.appliedDesiredVersion();
            logOffsets.putAll(s.logOffsets());
        }
    }

    public synchronized String nodeId() {
        return nodeId;
    }

    public synchronized String serverEpoch() {
        return serverEpoch;
    }

    public synchronized long appliedDesiredVersion() {
        return appliedDesiredVersion;
    }

    /** Records a registration; a new server epoch resets the applied version (the new store counts afresh). */
    public synchronized void registered(String id, String epoch) throws IOException {
        if (epoch != null && !epoch.equals(serverEpoch)) appliedDesiredVersion = -1;
        nodeId = id;
        serverEpoch = epoch;
        save();
    }

    public synchronized void applied(long version) throws IOException {
        if (version == appliedDesiredVersion) return;
        appliedDesiredVersion = version;
        save();
    }

    public synchronized Map<String, Long> logOffsets() {
        return Map.copyOf(logOffsets);
    }

    public synchronized void logOffsets(Map<String, Long> offsets) throws IOException {
        if (offsets.equals(logOffsets)) return;
        logOffsets.clear();
        logOffsets.putAll(offsets);
        save();
    }

    private void save() throws IOException {
        AgentJson.writeAtomically(file, new Snapshot(nodeId, serverEpoch, appliedDesiredVersion, logOffsets));
    }
}
