package io.gpupool.server.fuzz;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * An HTTP/1.1 request as bytes, built from parts that may each be wrong: the request line, header lines (any
 * bytes), the body. Content-Length is added to match the body unless the message sets its own framing.
 */
public final class HttpMessage {
    public String method;
    public String target;
    public String version = "HTTP/1.1";
    private final List<byte[]> headerLines = new ArrayList<>();
    private byte[] body = new byte[0];
    private boolean ownFraming;

    public HttpMessage(String method, String target) {
        this.method = method;
        this.target = target;
    }

    public HttpMessage header(String name, String value) {
        return headerLine((name + ": " + value).getBytes(StandardCharsets.UTF_8));
    }

    /** A header line exactly as given (no colon, raw bytes, a folded continuation: whatever the fuzzer wants). */
    public HttpMessage headerLine(byte[] line) {
        headerLines.add(line);
        String name = new String(line, StandardCharsets.ISO_8859_1).split(":", 2)[0].trim().toLowerCase(Locale.ROOT);
        if (name.equals("content-length") || name.equals("transfer-encoding")) ownFraming = true;
        return this;
    }

    public boolean has(String name) {
        String prefix = name.toLowerCase(Locale.ROOT) + ":";
        for (byte[] l : headerLines) {
            if (new String(l, StandardCharsets.ISO_8859_1).toLowerCase(Locale.ROOT).startsWith(prefix)) return true;
        }
        return false;
    }

    public HttpMessage body(byte[] body) {
        this.body = body;
        return this;
    }

    public byte[] body() {
        return body;
    }

    /** No Content-Length of its own making: the body (if any) is then the start of a second, garbage request. */
    public HttpMessage unframed() {
        ownFraming = true;
        return this;
    }

    public byte[] bytes() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(body.length + 512);
        out.writeBytes((method + " " + target + (version.isEmpty() ? "" : " " + version) + "\r\n").getBytes(StandardCharsets.UTF_8));
        for (byte[] l : headerLines) {
            out.writeBytes(l);
            out.writeBytes(new byte[]{'\r', '\n'});
        }
        if (!ownFraming && (body.length > 0 || method.equals("POST") || method.equals("PUT"))) {
            out.writeBytes(("Content-Length: " + body.length + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
        }
        out.writeBytes(new byte[]{'\r', '\n'});
        out.writeBytes(body);
        return out.toByteArray();
    }

    /** The request line and header names, for a failure message (bodies and tokens can be long). */
    public String summary() {
        StringBuilder sb = new StringBuilder(clip(method + " " + target + " " + version, 300));
        for (byte[] l : headerLines) sb.append(" | ").append(clip(new String(l, StandardCharsets.ISO_8859_1), 80));
        sb.append(" | body ").append(body.length).append(" bytes");
        if (body.length > 0) sb.append(": ").append(clip(new String(body, 0, Math.min(body.length, 200), StandardCharsets.ISO_8859_1), 160));
        return sb.toString();
    }

    private static String clip(String s, int n) {
        String printable = s.replaceAll("[\\x00-\\x1f\\x7f-\\xff]", "?");
        return printable.length() > n ? printable.substring(0, n) + "..." : printable;
    }
}
