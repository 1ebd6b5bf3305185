package io.gpupool.server.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.gpupool.agent.protocol.AgentProtocolVersion;
import io.gpupool.server.fuzz.FuzzCase.Identity;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.gpupool.server.fuzz.JsonMutator.pick;

/**
 * Turns an operation of the OpenAPI document into a random request, valid or broken in any of its parts:
 * path parameters, the path itself, the query string, the method, the request line, Authorization, other
 * headers, framing (Content-Length, chunked) and the body. It knows the answer where the broken part allows:
 * a request that reaches its route cleanly gets 401 without a valid token (unless the route is public), 400 for a query string that is
 * not percent-encoded UTF-8, 405 for a standard method the path does not serve, 403 with a token of a role
 * the document does not list.
 */
public final class RequestFuzzer {
    private static final Pattern PARAM = Pattern.compile("\\{([^}]+)}");
    private static final Pattern SAFE = Pattern.compile("[A-Za-z0-9_-]{1,200}");
    private static final List<String> STANDARD = List.of("GET", "POST", "PUT", "DELETE", "PATCH");
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private final SchemaSampler sampler;
    private final List<Identity> identities;
    private final BiFunction<OpenApi.Operation, String, List<String>> pathValues;
    private final Set<String> served = new HashSet<>();
    private final String host;

    /**
     * @param pathValues valid values of a path parameter of an operation (a job that exists, a node that is known)
     * @param host the Host header a valid request carries
     */
    public RequestFuzzer(OpenApi api, SchemaSampler sampler, List<Identity> identities, BiFunction<OpenApi.Operation, String, List<String>> pathValues, String host) {
        this.sampler = sampler;
        this.identities = identities;
        this.pathValues = pathValues;
        this.host = host;
        for (OpenApi.Operation op : api.operations()) served.add(op.method().toUpperCase() + " " + op.path());
    }

    /** What a generator did: whether the request still reaches its route as an ordinary HTTP request. */
    private static final class Draft {
        final List<String> mutations = new ArrayList<>();
        boolean clean = true;
        boolean wrongMethod;
        boolean validToken;
        boolean badQuery;

        void broke(String what) {
            mutations.add(what);
            clean = false;
        }
    }

    public FuzzCase next(long index, OpenApi.Operation op, Random rnd) {
        Draft d = new Draft();
        Identity who = identity(op, rnd);
        String target = path(op, rnd, d);
        if (rnd.nextInt(3) == 0) {
            String query = query(op, rnd, d);
            d.badQuery = !Texts.percentEncodedUtf8(query);
            target += "?" + query;
        }
        if (!target.chars().allMatch(ch -> ch > 0x20 && ch < 0x7f)) d.broke("raw bytes in the target"); // Jetty refuses them in the request line
        HttpMessage m = new HttpMessage(method(op, rnd, d), target);
        if (rnd.nextInt(25) == 0) requestLine(m, rnd, d);
        if (rnd.nextInt(30) == 0) host(m, rnd, d);
        else m.header("Host", host);
        // an agent route's caller announces the protocol version it speaks, as the agent does (absent: version 1)
        if (op.params("header").stream().anyMatch(p -> p.name().equals(AgentProtocolVersion.HEADER))) {
            m.header(AgentProtocolVersion.HEADER, Integer.toString(AgentProtocolVersion.CURRENT));
        }
        authorization(m, who, rnd, d);
        body(m, op, rnd, d);
        for (int i = 0, n = rnd.nextInt(3) == 0 ? 1 + rnd.nextInt(3) : 0; i < n; i++) noise(m, rnd, d);
        if (rnd.nextInt(12) == 0) framing(m, rnd, d);
        m.header("Connection", "close");
        return new FuzzCase(index, op, who, m, expected(op, who, d), List.copyOf(d.mutations));
    }

    private Set<Integer> expected(OpenApi.Operation op, Identity who, Draft d) {
        if (!d.clean) return Set.of();
        boolean guarded = op.isApi() && !op.isPublic(); // a public API route (security: []) takes any token or none
        if (guarded && !d.validToken) return Set.of(401);
        if (op.isApi() && d.badQuery) return Set.of(400);
        if (d.wrongMethod) return Set.of(405);
        if (guarded && !op.roles().contains(who.role())) return Set.of(403);
        return Set.of();
    }

    /** Half the time a caller the operation admits, else anyone (no token, admin, member, agent, node). */
    private Identity identity(OpenApi.Operation op, Random rnd) {
        if (rnd.nextBoolean()) {
            List<Identity> admitted = identities.stream().filter(i -> i.role() != null && op.roles().contains(i.role())).toList();
            if (!admitted.isEmpty()) return admitted.get(rnd.nextInt(admitted.size()));
        }
        return identities.get(rnd.nextInt(identities.size()));
    }

    // ---- path, query, method, request line

    private String path(OpenApi.Operation op, Random rnd, Draft d) {
        Matcher mt = PARAM.matcher(op.path());
        StringBuilder sb = new StringBuilder();
        while (mt.find()) {
            String name = mt.group(1);
            String value;
            if (rnd.nextInt(4) > 0) {
                List<String> valid = pathValues.apply(op, name);
                value = valid.get(rnd.nextInt(valid.size()));
            } else {
                value = pathParam(rnd);
                d.mutations.add("path parameter " + name);
                if (!SAFE.matcher(value).matches()) d.clean = false; // may be refused or routed elsewhere
            }
            mt.appendReplacement(sb, Matcher.quoteReplacement(value));
        }
        mt.appendTail(sb);
        String path = sb.toString();
        if (rnd.nextInt(16) == 0) {
            path = switch (rnd.nextInt(12)) {
                case 0 -> path.toUpperCase();
                case 1 -> path.replaceFirst("/", "//");
                case 2 -> path + "/";
                case 3 -> path.replaceFirst("/([^/]+)$", "/./$1");
                case 4 -> path.replaceFirst("^/([^/]+)", "/x/../$1");
                case 5 -> path.replaceFirst("/([^/]+)$", "%2F$1");
                case 6 -> path + ";jsessionid=" + Texts.word(rnd, 8);
                case 7 -> path + pick(rnd, "%00", "%", "%zz", "%C3%28", "%ff");
                case 8 -> path + "/" + Texts.word(rnd, 5);
                case 9 -> path + "#fragment";
                case 10 -> path.replace("/api/", "/%61pi/");
                default -> path + "/\u00e9t\u00e9";
            };
            d.broke("path");
        }
        return path;
    }

    /** A path parameter valid in form or not: long, unicode, encoded slashes, dot segments, NUL, bad escapes. */
    private static String pathParam(Random rnd) {
        return switch (rnd.nextInt(16)) {
            case 0 -> "j" + Math.abs(rnd.nextLong());
            case 1 -> "x".repeat(pick(rnd, 33, 254, 300, 3000, 9000));
            case 2 -> Texts.encode(Texts.unicode(rnd, 1 + rnd.nextInt(30)));
            case 3 -> Texts.unicode(rnd, 1 + rnd.nextInt(10)).replaceAll("[\\x00-\\x20/?#%\\x7f]", "_"); // raw, unencoded UTF-8
            case 4 -> pick(rnd, "%zz", "%", "%f", "%ff", "%C3%28", "%E2%82", "%ED%A0%80", "%C0%AF");
            case 5 -> pick(rnd, "%2F", "a%2Fb", "%2f..%2f..", "%5C", "a%5Cb");
            case 6 -> pick(rnd, "..", ".", "%2e%2e", "%2E", "..%00", "...");
            case 7 -> pick(rnd, "%00", "a%00b", "%0A", "%0D%0A", "%7F", "%20", "+");
            case 8 -> pick(rnd, "a;b=c", "%3B", "%3F", "%23", "%26", "%3D", "%25", "%2525");
            case 9 -> "";
            case 10 -> pick(rnd, "-1", "0", "99999999999999999999", "1e9", "null", "true", "undefined", "NaN");
            case 11 -> pick(rnd, "%7B%7D", "%5B%5D", "%22", "%27", "%3C%3E", "%60", "%24%7Bx%7D");
            case 12 -> Texts.encode(Texts.word(rnd, 3)) + "%" + Texts.word(rnd, 1);
            case 13 -> pick(rnd, "FUZZ", "Fuzz", "A100-80GB-0000", "fuzz ", "fuzz%20", "fu%7Azz");
            case 14 -> Texts.encode("../../etc/passwd");
            default -> Texts.word(rnd, 1 + rnd.nextInt(40));
        };
    }

    /** Documented parameters with good and bad values, unknown ones, repeats, empty values, bad encodings. */
    private static String query(OpenApi.Operation op, Random rnd, Draft d) {
        List<String> names = new ArrayList<>(List.of("limit", "cursor", "state", "tenant", "since", "until", "offset", "x", "", "limit[]", "%zz", "\u00e9"));
        op.params("query").forEach(p -> names.add(p.name()));
        StringBuilder q = new StringBuilder();
        for (int i = 0, n = 1 + rnd.nextInt(4); i < n; i++) {
            if (i > 0) q.append(pick(rnd, "&", "&", "&", "&&", ";"));
            String name = pick(rnd, names.toArray(String[]::new));
            switch (rnd.nextInt(10)) {
                case 0 -> q.append(name);
                case 1 -> q.append('=').append(Texts.word(rnd, 3));
                case 2 -> q.append(name).append('=').append(value(rnd)).append('&').append(name).append('=').append(value(rnd));
                default -> q.append(name).append('=').append(value(rnd));
            }
        }
        if (rnd.nextInt(60) == 0) {
            q.append("&pad=").append("p".repeat(pick(rnd, 5000, 9000, 20_000)));
            d.broke("very long query");
        } else {
            d.mutations.add("query");
        }
        return q.toString();
    }

    private static String value(Random rnd) {
        return switch (rnd.nextInt(6)) {
            case 0 -> pick(rnd, "-1", "0", "1", "5", "1000", "1001", "99999999999999999999", "-99999999999999999999", "9223372036854775807", "1e3", "1.5", "0x10", " 1");
            case 1 -> pick(rnd, "", "%zz", "%", "%ff", "%00", "+", "%2B", "%C3%28", "%E2%82");
            case 2 -> pick(rnd, "PENDING", "PENDING,RUNNING", "pending", "BOGUS", ",", "stdout", "stderr", "STDERR", "fuzz", "other", "a100-80gb-0000");
            case 3 -> Texts.encode(Texts.unicode(rnd, 1 + rnd.nextInt(12)));
            case 4 -> pick(rnd, "true", "null", "[]", "{}", "%5B%5D", "x".repeat(300));
            default -> String.valueOf(rnd.nextInt(100));
        };
    }

    private String method(OpenApi.Operation op, Random rnd, Draft d) {
        String own = op.method().toUpperCase();
        if (rnd.nextInt(7) > 0) return own;
        if (rnd.nextInt(3) > 0) {
            String other = pick(rnd, STANDARD.toArray(String[]::new));
            if (other.equals(own)) return own;
            if (served.contains(other + " " + op.path())) {
                d.broke("method " + other + " of another route"); // another route on the same path
            } else {
                d.wrongMethod = true;
                d.mutations.add("method " + other);
            }
            return other;
        }
        String odd = pick(rnd, "HEAD", "OPTIONS", "TRACE", "CONNECT", "QUERY", "PROPFIND", "FOO", "get", "Post", "G(T", "GET\u0001",
                "M".repeat(300), "DELETE\u00e9", "PRI", "BREW");
        d.broke("method " + odd);
        return odd;
    }

    private static void requestLine(HttpMessage m, Random rnd, Draft d) {
        switch (rnd.nextInt(8)) {
            case 0 -> m.version = pick(rnd, "HTTP/1.0", "HTTP/1.2", "HTTP/2.0", "HTTP/9.9", "http/1.1", "HTTP/1.1 extra", "HTTP/1", "HTTP/");
            case 1 -> m.version = "";
            case 2 -> m.target = "http://" + pick(rnd, "127.0.0.1", "evil.example", "") + m.target;
            case 3 -> m.target = pick(rnd, "*", "", " " + m.target, m.target + " ", "\t" + m.target);
            case 4 -> m.method = m.method + " ";
            case 5 -> m.target = m.target.replaceFirst("^/", "");
            case 6 -> m.target = m.target + "\u0000";
            default -> m.target = m.target.replace("/", "\\");
        }
        d.broke("request line");
    }

    // ---- headers

    private void host(HttpMessage m, Random rnd, Draft d) {
        switch (rnd.nextInt(5)) {
            case 0 -> { } // none
            case 1 -> m.header("Host", host).header("Host", "evil.example");
            case 2 -> m.header("Host", pick(rnd, "", "a b", "x:99999", "[::1", "\u00e9.example", "h".repeat(300)));
            case 3 -> m.headerLine(("Host: " + host + "\u0001").getBytes(StandardCharsets.ISO_8859_1));
            default -> m.header("Host", "other.example:1");
        }
        d.broke("Host");
    }

    private static void authorization(HttpMessage m, Identity who, Random rnd, Draft d) {
        String t = who.token();
        if (t == null) {
            switch (rnd.nextInt(12)) {
                case 0 -> m.header("Authorization", "Bearer");
                case 1 -> m.header("Authorization", "Bearer ");
                case 2 -> m.header("Authorization", "Basic dXNlcjpwYXNz");
                case 3 -> m.header("Authorization", "Bearer gp_" + Texts.word(rnd, 20));
                case 4 -> m.header("Authorization", "Bearer " + "t".repeat(pick(rnd, 300, 4000)));
                case 5 -> m.header("Authorization", "");
                case 6 -> m.header("Authorization", "Bearer \u00e9\u00e9");
                default -> { }
            }
            if (!m.has("Authorization")) return;
            d.mutations.add("bad Authorization");
            return;
        }
        int k = rnd.nextInt(24);
        if (k < 15) {
            m.header("Authorization", "Bearer " + t);
            d.validToken = true;
            return;
        }
        switch (k) {
            case 15 -> { m.header("Authorization", pick(rnd, "bearer ", "BEARER ", "Bearer    ") + t + pick(rnd, "", " ", "  ")); d.validToken = true; }
            case 16 -> m.header("Authorization", pick(rnd, "Basic ", "Token ", "Bearer: ", "Bearer\t", "", "Bearer" ) + t);
            case 17 -> m.header("Authorization", "Bearer " + t + pick(rnd, "x", "=", ",", " x"));
            case 18 -> m.header("Authorization", "Bearer " + t.substring(0, t.length() - 1));
            case 19 -> m.header("Authorization", "Bearer " + t).header("Authorization", "Bearer gp_other");
            case 20 -> m.header("Authorization", "Bearer gp_other").header("Authorization", "Bearer " + t);
            case 21 -> m.header("Authorization", "Bearer " + t + ", Bearer " + t);
            default -> {
                m.headerLine(concat("Authorization: Bearer " + t, pick(rnd, new byte[]{(byte) 0xff}, new byte[]{1}, new byte[]{0}, new byte[]{(byte) 0xc3, (byte) 0xa9}, new byte[]{0x7f})));
                d.broke("Authorization bytes");
                return;
            }
        }
        if (k >= 19 && k <= 21) d.broke("two Authorization values"); // which one counts is the server's choice
        else d.mutations.add(d.validToken ? "Authorization spelling" : "bad Authorization");
    }

    /** A header a client might send, right or wrong; the ones Jetty itself may refuse make the request unclean. */
    private static void noise(HttpMessage m, Random rnd, Draft d) {
        switch (rnd.nextInt(20)) {
            case 0 -> m.header("Accept", pick(rnd, "application/json", "text/html", "*/*", "application/xml", "", "garbage;;q=x", "application/json;q=0", "text/event-stream", "*/*;q=0"));
            case 1 -> m.header("Accept-Charset", pick(rnd, "utf-8", "iso-8859-1", "bogus", "*;q=0", "utf-16"));
            case 2 -> m.header("Accept-Encoding", pick(rnd, "gzip", "br", "*", "identity;q=0", "gzip;q=x"));
            case 3 -> m.header("Idempotency-Key", pick(rnd, "", " ", "k y", "fz-key-" + rnd.nextInt(20), "k".repeat(201), "k".repeat(200), "\u00e9t\u00e9", "a\tb"));
            case 4 -> m.header("Idempotency-Key", "fz-dup-" + rnd.nextInt(5)).header("Idempotency-Key", "fz-dup-" + rnd.nextInt(5));
            case 5 -> m.header(pick(rnd, "X-Forwarded-For", "X-Forwarded-Proto", "Forwarded", "X-Real-IP"), pick(rnd, "garbage", "1.2.3.4, ::1", "https", "for=\"[::1\"", ""));
            case 6 -> m.header("Cookie", pick(rnd, "a=b", "=;;;", "JSESSIONID=" + Texts.word(rnd, 30), "\"\""));
            case 7 -> m.header("Range", pick(rnd, "bytes=0-1", "bytes=-5", "bytes=9-1", "lines=1"));
            case 8 -> m.header(pick(rnd, "If-None-Match", "If-Match", "If-Modified-Since"), pick(rnd, "*", "\"x\"", "yesterday"));
            case 9 -> m.header("Origin", pick(rnd, "http://evil.example", "null", ""));
            case 10 -> {
                m.header("Connection", pick(rnd, "keep-alive", "upgrade", "close, close")).header("Upgrade", pick(rnd, "websocket", "h2c", "bogus/1"));
                d.broke("Upgrade"); // Jetty answers an upgrade it cannot make itself
                return;
            }
            case 11 -> m.header("Content-Encoding", pick(rnd, "gzip", "br", "identity", "deflate", "bogus"));
            case 12 -> m.headerLine(concat("User-Agent: fuzz", new byte[]{(byte) 0xe2, (byte) 0x98, (byte) 0x83}));
            case 13 -> m.header("X-" + Texts.word(rnd, 6), Texts.word(rnd, 20));
            case 14 -> {
                m.header("X-Big", "b".repeat(pick(rnd, 9000, 20_000)));
                d.broke("header over 8 KiB");
                return;
            }
            case 15 -> {
                for (int i = 0; i < 120; i++) m.header("X-Many-" + i, "v");
            }
            case 16 -> {
                m.headerLine(concat("X-Ctl: a", pick(rnd, new byte[]{0}, new byte[]{1}, new byte[]{0x7f}, new byte[]{'\r'})));
                d.broke("control byte in a header");
                return;
            }
            case 17 -> {
                m.headerLine(pick(rnd, "NoColon", "Bad Name: x", ": empty name", " X-Leading: space", "X-Fold: a\r\n  folded", "X-A:\u00ff").getBytes(StandardCharsets.ISO_8859_1));
                d.broke("malformed header line");
                return;
            }
            case 18 -> {
                String expect = pick(rnd, "100-continue", "100-banana", "");
                m.header("Expect", expect);
                if (!expect.equals("100-continue")) {
                    d.broke("Expect " + expect);
                    return;
                }
            }
            default -> m.header("Content-Language", pick(rnd, "en", "\u00e9", "x-klingon"));
        }
        d.mutations.add("header noise");
    }

    // ---- body and framing

    private void body(HttpMessage m, OpenApi.Operation op, Random rnd, Draft d) {
        int limit = op.path().startsWith("/api/v1/agent/") ? 1024 * 1024 : 64 * 1024;
        boolean takesBody = op.body() != null;
        JsonNode value;
        if (takesBody && rnd.nextInt(12) > 0) {
            value = sampler.sample(op.body(), rnd);
        } else if (!takesBody && (op.method().equals("post") || op.method().equals("put")) && rnd.nextInt(3) == 0) {
            value = F.objectNode().put("label", Texts.word(rnd, 6)); // the token routes take an optional label
        } else if (rnd.nextInt(10) == 0) {
            value = JsonMutator.strange(rnd);
            d.mutations.add("unexpected body");
        } else {
            if (takesBody) d.mutations.add("no body");
            return;
        }
        if (rnd.nextInt(3) == 0) {
            for (int i = 0, n = 1 + rnd.nextInt(3); i < n; i++) value = JsonMutator.mutate(value, rnd);
            d.mutations.add("mutated JSON");
        }
        BodyEncoder.Encoded e = BodyEncoder.encode(value, rnd, limit);
        if (!e.how().equals("json")) d.mutations.add("body " + e.how());
        m.body(e.bytes());
        if (e.gzip() && rnd.nextInt(5) > 0) m.header("Content-Encoding", "gzip");
        contentType(m, rnd, d);
    }

    private static void contentType(HttpMessage m, Random rnd, Draft d) {
        if (rnd.nextInt(5) > 0) {
            m.header("Content-Type", pick(rnd, "application/json", "application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8"));
            return;
        }
        switch (rnd.nextInt(6)) {
            case 0 -> { } // none
            case 1 -> m.header("Content-Type", pick(rnd, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "multipart/form-data",
                    "*/*", "", "application/jsonx", "application/json-patch+json", "APPLICATION/JSON", "application/json, text/plain", "application/xml"));
            case 2 -> m.header("Content-Type", "application/json; charset=" + pick(rnd, "utf-16", "latin1", "bogus", "", "\"utf-8\"", "UTF-8; x=y", "us-ascii", "utf-32"));
            case 3 -> m.headerLine(concat("Content-Type: application/json; charset=", pick(rnd, new byte[]{(byte) 0xff}, new byte[]{'\\', 'x', 'f', 'f'}, new byte[]{'@', '@'})));
            case 4 -> m.header("Content-Type", "application/json").header("Content-Type", "text/plain");
            default -> m.header("Content-Type", "application/json; boundary=\"" + Texts.word(rnd, 4));
        }
        d.mutations.add("Content-Type");
    }

    /** Content-Length that lies, is doubled or is not a number; chunked bodies, good and bad. */
    private static void framing(HttpMessage m, Random rnd, Draft d) {
        byte[] body = m.body();
        switch (rnd.nextInt(10)) {
            case 0 -> m.header("Content-Length", String.valueOf(Math.max(0, body.length - 1 - rnd.nextInt(Math.max(1, body.length)))));
            case 1 -> m.header("Content-Length", String.valueOf(body.length + 1 + rnd.nextInt(100)));
            case 2 -> m.header("Content-Length", pick(rnd, "-1", "abc", "", "1e3", "+5", "99999999999999999999", " 5", "0x10"));
            case 3 -> m.header("Content-Length", String.valueOf(body.length)).header("Content-Length", String.valueOf(body.length + 1));
            case 4 -> m.header("Content-Length", body.length + ", " + body.length);
            case 5 -> {
                m.header("Transfer-Encoding", "chunked").body(chunked(body, rnd));
                d.mutations.add("chunked");
                return; // well-formed chunked framing: still a clean request
            }
            case 6 -> m.header("Transfer-Encoding", "chunked").body(("zz\r\n" + new String(body, StandardCharsets.ISO_8859_1) + "\r\n0\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            case 7 -> m.header("Transfer-Encoding", "chunked").header("Content-Length", String.valueOf(body.length)).body(chunked(body, rnd));
            case 8 -> m.header("Transfer-Encoding", pick(rnd, "gzip", "gzip, chunked", "chunked, gzip", "identity", "bogus"));
            default -> m.unframed();
        }
        d.broke("framing");
    }

    private static byte[] chunked(byte[] body, Random rnd) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int off = 0; off < body.length; ) {
            int n = Math.min(body.length - off, 1 + rnd.nextInt(4096));
            out.writeBytes((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.write(body, off, n);
            out.writeBytes(new byte[]{'\r', '\n'});
            off += n;
        }
        out.writeBytes("0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        return out.toByteArray();
    }

    private static byte[] concat(String head, byte[] tail) {
        byte[] h = head.getBytes(StandardCharsets.ISO_8859_1);
        byte[] out = java.util.Arrays.copyOf(h, h.length + tail.length);
        System.arraycopy(tail, 0, out, h.length, tail.length);
        return out;
    }
}
