package io.gpupool.agent;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.gpupool.agent.protocol.ProtocolJson;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The agent's files in its work directory, in the agent protocol's JSON form ({@link ProtocolJson}): a launch
 * stored there reads back as the server sent it.
 */
public final class AgentJson {

    public static final ObjectMapper MAPPER = ProtocolJson.MAPPER;

    private AgentJson() {
    }

    /**
     * Writes {@code value} to {@code file} so that an agent killed at any moment leaves either the old or
     * the new content, never half of one: write a sibling temporary file, rename it over the target. (No
     * fsync: that would guard against the machine losing power, which ends its jobs anyway, at a cost paid
     * on every job start.)
     */
    public static void writeAtomically(Path file, Object value) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.write(tmp, MAPPER.writeValueAsBytes(value));
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    public static <T> T read(Path file, Class<T> type) throws IOException {
        try (var in = Files.newInputStream(file)) { // NoSuchFileException when absent, which callers test for
            return MAPPER.readValue(in, type);
        }
    }
}
