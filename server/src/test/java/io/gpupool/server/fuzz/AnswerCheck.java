package io.gpupool.server.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * What every answer must be: never 5xx; an error (4xx) is JSON {@code {status, error, field, rule, message}}
 * with the answer's own status and a message to read; the status the fuzzer expected, where it could tell;
 * a success from the API is JSON too.
 */
public final class AnswerCheck {
    private static final ObjectMapper JSON = new ObjectMapper();

    private AnswerCheck() {}

    /** Null when the answer is right, else what is wrong with it. */
    public static String problem(FuzzCase c, RawHttp.Answer a) {
        int status = a.status();
        if (status >= 500) return "answered " + status + ": " + clip(a.text());
        if (!c.expected().isEmpty() && !c.expected().contains(status)) return "answered " + status + ", not " + c.expected() + ": " + clip(a.text());
        String type = a.header("content-type");
        boolean json = type != null && type.toLowerCase(java.util.Locale.ROOT).startsWith("application/json");
        if (status >= 400) {
            if (c.head()) return json ? null : "a " + status + " to HEAD with content type " + type;
            if (!json) return "a " + status + " that is not JSON (" + type + "): " + clip(a.text());
            return errorShape(status, a.text());
        }
        if (status >= 200 && status < 300 && c.op().isApi() && !c.head() && !(type != null && type.startsWith("text/event-stream"))) {
            if (!json) return "a " + status + " from the API that is not JSON (" + type + ")";
            try {
                JSON.readTree(a.body());
            } catch (java.io.IOException e) {
                return "a " + status + " whose JSON does not parse: " + clip(a.text());
            }
        }
        return null;
    }

    private static String errorShape(int status, String body) {
        JsonNode e;
        try {
            e = JSON.readTree(body);
        } catch (java.io.IOException x) {
            return "a " + status + " whose JSON does not parse: " + clip(body);
        }
        if (e == null || !e.isObject()) return "a " + status + " whose body is not an object: " + clip(body);
        if (e.path("status").asInt() != status) return "a " + status + " whose body says status " + e.path("status") + ": " + clip(body);
        for (String field : new String[] {"error", "rule", "message"}) {
            if (!e.path(field).isTextual() || e.path(field).asText().isBlank()) return "a " + status + " without '" + field + "': " + clip(body);
        }
        if (!e.has("field") || !(e.get("field").isNull() || e.get("field").isTextual())) return "a " + status + " without 'field' (null or text): " + clip(body);
        if (status == 401 && !e.path("field").asText().equals("Authorization")) return "a 401 that does not name Authorization: " + clip(body);
        return null;
    }

    private static String clip(String s) {
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }
}
