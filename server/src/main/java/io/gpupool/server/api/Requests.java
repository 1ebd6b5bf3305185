package io.gpupool.server.api;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.DeserializationFeature;
import io.gpupool.server.auth.Principal;
import io.gpupool.server.auth.Role;
import io.gpupool.server.core.ServiceException;
import io.gpupool.server.core.ServiceException.Kind;
import io.javalin.http.Context;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** What every handler needs from a request: the caller, its role, a JSON body within limits, a waited result. */
final class Requests {
    static final int MAX_BODY_BYTES = 64 * 1024;
    /** An agent's report may carry output (base64): up to 1 MiB. */
    static final int MAX_AGENT_BODY_BYTES = 1024 * 1024;
    static final String PRINCIPAL = "gpupool.principal";
    private static final ObjectMapper STRICT = strict(MAX_BODY_BYTES);
    private static final ObjectMapper STRICT_LARGE = strict(MAX_AGENT_BODY_BYTES);

    private static ObjectMapper strict(int maxBytes) {
        ObjectMapper m = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        m.getFactory().setStreamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(32).maxStringLength(maxBytes).build());
        return m;
    }

    private Requests() {}

    static Principal principal(Context ctx) {
        Principal p = ctx.attribute(PRINCIPAL);
        if (p == null) throw new ServiceException(Kind.UNAUTHENTICATED, "Authorization", "a Bearer token is required");
        return p;
    }

    /** The caller, who must have one of the roles (else 403 naming what the role may not do). */
    static Principal require(Context ctx, String action, Role... roles) {
        Principal p = principal(ctx);
        if (Arrays.asList(roles).contains(p.role())) return p;
        throw ServiceException.forbidden(p.role().wire() + " tokens cannot " + action);
    }

    /** The body as a JSON value: 415 unless uncompressed JSON in UTF-8, 413 over the limit, 400 when it does not parse. */
    static JsonNode json(Context ctx) {
        return json(ctx, MAX_BODY_BYTES);
    }

    /** The same, for a body of up to {@code maxBytes} (64 KiB or {@link #MAX_AGENT_BODY_BYTES}). */
    static JsonNode json(Context ctx, int maxBytes) {
        requireJsonType(ctx);
        String encoding = ctx.header("Content-Encoding");
        if (encoding != null && !encoding.isBlank() && !encoding.trim().equalsIgnoreCase("identity")) {
            throw new ServiceException(Kind.UNSUPPORTED_MEDIA_TYPE, "Content-Encoding", "'" + clip(encoding) + "' is not supported; send the body uncompressed");
        }
        byte[] body = read(ctx, maxBytes);
        if (body.length == 0) throw ServiceException.malformed("body", "is empty; a JSON object is expected");
        try {
            return (maxBytes > MAX_BODY_BYTES ? STRICT_LARGE : STRICT).readTree(body);
        } catch (JsonParseException e) {
            var loc = e.getLocation();
            throw ServiceException.malformed("body", "malformed JSON at line " + loc.getLineNr() + ", column " + loc.getColumnNr() + ": " + clip(e.getOriginalMessage()));
        } catch (JsonProcessingException e) {
            throw ServiceException.malformed("body", "malformed JSON: " + clip(e.getOriginalMessage()));
        } catch (IOException e) {
            throw ServiceException.malformed("body", "cannot be read: " + clip(e.getMessage()));
        }
    }

    /**
     * The Content-Type header as sent. Not {@code ctx.contentType()}: the servlet request parses the charset
     * and throws on a name Java does not know ({@code charset=@@}), which would be a 500.
     */
    static String contentType(Context ctx) {
        return ctx.header("Content-Type");
    }

    /** application/json, in UTF-8 if a charset is named (JSON is UTF-8; another charset would be misread). */
    private static void requireJsonType(Context ctx) {
        String type = contentType(ctx);
        String[] parts = type == null ? new String[] {""} : type.split(";");
        if (!parts[0].trim().equalsIgnoreCase("application/json")) {
            throw new ServiceException(Kind.UNSUPPORTED_MEDIA_TYPE, "Content-Type", "must be application/json, got " + (type == null ? "none" : "'" + clip(type) + "'"));
        }
        for (int i = 1; i < parts.length; i++) {
            String[] kv = parts[i].split("=", 2);
            if (!kv[0].trim().equalsIgnoreCase("charset")) continue;
            String charset = kv.length < 2 ? "" : kv[1].trim().replace("\"", "");
            if (!charset.equalsIgnoreCase("utf-8") && !charset.equalsIgnoreCase("utf8")) {
                throw new ServiceException(Kind.UNSUPPORTED_MEDIA_TYPE, "Content-Type", "charset must be utf-8, got '" + clip(charset) + "'");
            }
        }
    }

    private static byte[] read(Context ctx, int maxBytes) {
        long declared = ctx.contentLength();
        if (declared > maxBytes) throw tooLarge(maxBytes);
        try (InputStream in = ctx.req().getInputStream()) {
            byte[] b = in.readNBytes(maxBytes + 1);
            if (b.length > maxBytes) throw tooLarge(maxBytes);
            return b;
        } catch (IOException e) {
            throw ServiceException.malformed("body", "cannot be read: " + clip(e.getMessage()));
        }
    }

    private static ServiceException tooLarge(int maxBytes) {
        return new ServiceException(Kind.TOO_LARGE, "body", "must be at most " + maxBytes + " bytes");
    }

    /** An integer query parameter within bounds, or the default. */
    static long queryLong(Context ctx, String name, long dflt, long min, long max) {
        String v = ctx.queryParam(name);
        if (v == null || v.isEmpty()) return dflt;
        long x;
        try {
            x = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw ServiceException.malformed(name, "must be an integer, got '" + clip(v) + "'");
        }
        if (x < min || x > max) throw ServiceException.invalid(name, "must be in " + min + ".." + max + ", got " + x);
        return x;
    }

    /** Waits for the engine loop's answer (requests run on virtual threads, so waiting is cheap). */
    static <T> T await(CompletableFuture<T> f) {
        try {
            return f.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            throw new ServiceException(Kind.UNAVAILABLE, null, "the service is overloaded or its store is unavailable; retry (with the same Idempotency-Key)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServiceException(Kind.UNAVAILABLE, null, "interrupted");
        }
    }

    static String clip(String s) {
        if (s == null) return "";
        return s.length() > 120 ? s.substring(0, 120) + "..." : s;
    }
}
