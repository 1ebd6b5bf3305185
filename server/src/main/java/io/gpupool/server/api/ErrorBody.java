package io.gpupool.server.api;

import java.util.LinkedHashMap;
import java.util.Map;

/** The one shape of every error the server answers: {@code {status, error, field, rule, message}}. */
final class ErrorBody {
    private ErrorBody() {}

    /** {@code field}: the field, header or query parameter at fault, or null; {@code rule}: the rule it breaks. */
    static Map<String, Object> of(int status, String field, String rule) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", status);
        body.put("error", reason(status));
        body.put("field", field);
        body.put("rule", rule);
        body.put("message", (field != null ? "field '" + field + "': " : "") + rule);
        return body;
    }

    static String reason(int status) {
        return switch (status) {
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 403 -> "Forbidden";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 409 -> "Conflict";
            case 413 -> "Content Too Large";
            case 414 -> "URI Too Long";
            case 415 -> "Unsupported Media Type";
            case 417 -> "Expectation Failed";
            case 422 -> "Unprocessable Content";
            case 426 -> "Upgrade Required";
            case 429 -> "Too Many Requests";
            case 431 -> "Request Header Fields Too Large";
            case 503 -> "Service Unavailable";
            default -> "Error";
        };
    }
}
