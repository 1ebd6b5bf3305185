package io.gpupool.server.fuzz;

import java.util.List;
import java.util.Set;

/**
 * One generated request: the operation it aims at, who sends it, the bytes, and the statuses it must get when
 * the fuzzer can tell ({@code expected} empty: any answer below 500 will do).
 *
 * @param mutations what was changed from a valid request, for the failure message
 */
public record FuzzCase(long index, OpenApi.Operation op, Identity identity, HttpMessage message, Set<Integer> expected, List<String> mutations) {
    /** A caller: {@code token} null for none; {@code role} as the OpenAPI document names roles. */
    public record Identity(String name, String token, String role) {}

    public boolean head() {
        return message.method.trim().equals("HEAD"); // Jetty reads "HEAD " as HEAD too
    }

    public String describe() {
        return "#" + index + " " + op.key() + " as " + identity.name() + " " + mutations + (expected.isEmpty() ? "" : " expecting " + expected)
                + ": " + message.summary();
    }
}
