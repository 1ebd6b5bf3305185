package io.gpupool.server.api;

import io.gpupool.server.core.ServiceException;
import io.javalin.http.Context;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;

/** The query string of an API call, checked as a whole before any handler reads a parameter from it. */
final class QueryStrings {
    private QueryStrings() {}

    /**
     * 400 for a query string that is not percent-encoded UTF-8 ({@code limit=%zz}, {@code x=%C3%28}): the
     * servlet layer would drop such a value without a word, so {@code ?tenant=a&limit=%zz} would quietly
     * list 100 jobs. Names the parameter when its name can be read.
     */
    static void check(Context ctx) {
        String query = ctx.queryString();
        if (query == null) return;
        for (String pair : query.split("[&;]")) {
            int eq = pair.indexOf('=');
            String name = decoded(eq < 0 ? pair : pair.substring(0, eq));
            if (name != null && (eq < 0 || decoded(pair.substring(eq + 1)) != null)) continue;
            throw ServiceException.malformed(name == null || name.isEmpty() ? "query" : Requests.clip(name), "must be percent-encoded UTF-8, got '" + Requests.clip(pair) + "'");
        }
    }

    /** The decoded text, or null when it is not percent-encoded UTF-8. */
    private static String decoded(String s) {
        try {
            return decode(s);
        } catch (IllegalArgumentException | CharacterCodingException e) {
            return null;
        }
    }

    /** What a percent-encoded string stands for; throws on a '%' without two hex digits or on bytes that are not UTF-8. */
    private static String decode(String s) throws CharacterCodingException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '%') {
                bytes.writeBytes(String.valueOf(c == '+' ? ' ' : c).getBytes(StandardCharsets.UTF_8));
                continue;
            }
            int hi = i + 2 < s.length() ? Character.digit(s.charAt(i + 1), 16) : -1;
            int lo = i + 2 < s.length() ? Character.digit(s.charAt(i + 2), 16) : -1;
            if (hi < 0 || lo < 0) throw new IllegalArgumentException("'%' needs two hex digits");
            bytes.write(hi * 16 + lo);
            i += 2;
        }
        return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
    }
}
