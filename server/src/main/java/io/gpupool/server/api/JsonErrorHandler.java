package io.gpupool.server.api;

import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The errors Jetty answers itself, before a request reaches Javalin: a request line, header or URI it cannot
 * parse or will not accept (bad percent-encoding, an encoded NUL, headers over 8 KiB, a lying
 * Content-Length, a second Host). They get the same JSON error shape as every other error, for every method
 * (Jetty's own pages are HTML, and bodiless for PUT and DELETE), naming the part at fault where Jetty's
 * message tells it. An HTTP version Jetty does not speak is the client's error, so a 400, not Jetty's 505.
 */
final class JsonErrorHandler extends ErrorHandler {
    private final io.gpupool.server.ha.Replica standbyOf;

    /** The active server's (or the one server's) errors. */
    JsonErrorHandler() {
        this(null);
    }

    /**
     * A standby's: a failure of its own (a 5xx; e.g. Jetty fails a request whose connection its closing listener cut) is
     * answered as everything else there is, 503 naming the active replica, which clients retry: never a 500.
     */
    JsonErrorHandler(io.gpupool.server.ha.Replica standbyOf) {
        this.standbyOf = standbyOf;
    }

    @Override
    public boolean errorPageForMethod(String method) {
        return true;
    }

    @Override
    protected void generateResponse(Request request, Response response, int code, String message, Throwable cause, Callback callback) {
        if (standbyOf != null && code >= 500) {
            byte[] body = Json.write(StandbyServer.refusal(standbyOf)).getBytes(StandardCharsets.UTF_8);
            response.setStatus(503);
            response.getHeaders().put(HttpHeader.RETRY_AFTER, "1");
            response.getHeaders().put(io.gpupool.server.ha.Replica.ACTIVE_HEADER, standbyOf.activeUrl());
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
            response.write(true, ByteBuffer.wrap(body), callback);
            return;
        }
        int status = code == 505 ? 400 : code;
        if (status != code) response.setStatus(status);
        String rule = code == 505 ? "unsupported HTTP version; use HTTP/1.1" : rule(status, message, cause);
        byte[] body = Json.write(ErrorBody.of(status, field(status, rule), Requests.clip(rule))).getBytes(StandardCharsets.UTF_8);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
    }

    /**
     * Jetty's message, or where that is only the status's name ("Bad Request"), what its cause says
     * ("Illegal character in path"); a bad percent-escape ("!hex z") said plainly.
     */
    private static String rule(int status, String message, Throwable cause) {
        boolean bare = message == null || message.isBlank() || message.equalsIgnoreCase(ErrorBody.reason(status));
        String detail = null;
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (!(t instanceof HttpException) && t.getMessage() != null && !t.getMessage().isBlank()) detail = t.getMessage();
        }
        if (!bare || detail == null) return bare ? ErrorBody.reason(status) : message;
        return detail.startsWith("!hex") ? "bad percent-encoding in the path: '%' needs two hex digits" : detail;
    }

    /** The part of the request Jetty's message is about, or null when it does not say. */
    private static String field(int status, String rule) {
        String r = rule.toLowerCase(Locale.ROOT);
        if (status == 431) return "headers";
        if (status == 414 || r.contains("uri") || r.contains("path") || r.contains("utf-8")) return "path";
        if (r.contains("version") || status == 426) return "version";
        if (r.contains("host") || r.contains("authority")) return "Host";
        if (r.contains("content-length")) return "Content-Length";
        if (r.contains("transfer-encoding") || r.contains("chunk")) return "Transfer-Encoding";
        if (status == 417 || r.contains("expect")) return "Expect";
        if (r.contains("method")) return "method";
        return null;
    }
}
