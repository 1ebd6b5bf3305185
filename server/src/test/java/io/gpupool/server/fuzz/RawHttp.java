package io.gpupool.server.fuzz;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.zip.GZIPInputStream;

/**
 * HTTP/1.1 over a plain socket, one request per connection: it sends exactly the bytes it is given (any
 * method, any header bytes, any percent-encoding, a Content-Length that lies), which the JDK client refuses.
 * The body is written on its own thread while the answer is read, so a server that answers before reading
 * the whole body (a 401 or 413 to a large upload) is heard rather than lost to a blocked write.
 */
public final class RawHttp {
    private static final int MAX_HEAD = 64 * 1024;

    private final String host;
    private final int port;
    private final int timeoutMs;

    public RawHttp(String host, int port, int timeoutMs) {
        this.host = host;
        this.port = port;
        this.timeoutMs = timeoutMs;
    }

    /** An answer: status, headers in order (names lower-cased) and the body (empty for HEAD and streams). */
    public record Answer(int status, List<String[]> headers, byte[] body) {
        public String header(String name) {
            for (String[] h : headers) if (h[0].equals(name)) return h[1];
            return null;
        }

        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /**
     * Sends {@code request} and reads one answer. {@code head}: the request's method is HEAD, so the answer
     * has no body whatever its Content-Length says. An event stream's body is not read (it never ends).
     *
     * @throws IOException when the server closes, resets or stays silent past the timeout without a full answer
     */
    public Answer exchange(byte[] request, boolean head) throws IOException {
        try (Socket sock = new Socket()) {
            sock.connect(new InetSocketAddress(host, port), timeoutMs);
            sock.setSoTimeout(timeoutMs);
            Thread writer = Thread.startVirtualThread(() -> write(sock, request));
            try {
                return read(sock.getInputStream(), head);
            } finally {
                writer.interrupt();
            }
        }
    }

    private static void write(Socket sock, byte[] request) {
        try {
            OutputStream out = sock.getOutputStream();
            // in pieces, so a server that stops reading early is seen as an early answer, not one huge blocked write
            for (int off = 0; off < request.length; off += 16 * 1024) {
                out.write(request, off, Math.min(16 * 1024, request.length - off));
            }
            out.flush();
            // the request is all there is: a server still waiting for body bytes a lying Content-Length promised
            // sees the end of input now rather than after its idle timeout
            sock.shutdownOutput();
        } catch (IOException e) {
            // the server closed its side before taking the whole request; its answer (if any) is read anyway
        }
    }

    private static Answer read(InputStream in, boolean head) throws IOException {
        while (true) {
            byte[] headBytes = readHead(in);
            String[] lines = new String(headBytes, StandardCharsets.ISO_8859_1).split("\r\n");
            String[] statusLine = lines[0].split(" ", 3);
            if (statusLine.length < 2 || !statusLine[0].startsWith("HTTP/1.")) throw new IOException("not an HTTP answer: " + lines[0]);
            int status = Integer.parseInt(statusLine[1]);
            List<String[]> headers = new ArrayList<>();
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                if (colon > 0) headers.add(new String[]{lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim()});
            }
            if (status >= 100 && status < 200) continue; // 100 Continue: the real answer follows
            Answer bare = new Answer(status, headers, new byte[0]);
            if (head || status == 204 || status == 304) return bare;
            String type = bare.header("content-type");
            if (type != null && type.startsWith("text/event-stream")) return bare;
            String te = bare.header("transfer-encoding");
            byte[] body;
            String length = bare.header("content-length");
            if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
                body = readChunked(in);
            } else if (length != null) {
                int n = Integer.parseInt(length);
                body = in.readNBytes(n);
                if (body.length < n) throw new IOException("answer " + status + " ended after " + body.length + " of " + n + " body bytes");
            } else {
                body = in.readAllBytes();
            }
            String encoding = bare.header("content-encoding");
            return new Answer(status, headers, encoding != null && encoding.equalsIgnoreCase("gzip") ? gunzip(body) : body);
        }
    }

    /** A request may ask for a compressed answer (Accept-Encoding: gzip): checks read the JSON inside. */
    private static byte[] gunzip(byte[] body) throws IOException {
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(body))) {
            return in.readAllBytes();
        }
    }

    private static byte[] readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) throw new IOException(head.size() == 0 ? "closed without an answer" : "closed inside the answer's head");
            head.write(b);
            matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
            if (head.size() > MAX_HEAD) throw new IOException("answer head over " + MAX_HEAD + " bytes");
        }
        byte[] b = head.toByteArray();
        return java.util.Arrays.copyOf(b, b.length - 4);
    }

    private static byte[] readChunked(InputStream in) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true) {
            String size = readLine(in);
            int semi = size.indexOf(';');
            int n = Integer.parseInt((semi >= 0 ? size.substring(0, semi) : size).trim(), 16);
            if (n == 0) {
                while (!readLine(in).isEmpty()) {
                    // trailers: none expected, skipped
                }
                return body.toByteArray();
            }
            byte[] chunk = in.readNBytes(n);
            if (chunk.length < n) throw new IOException("chunked answer ended inside a chunk");
            body.write(chunk);
            readLine(in);
        }
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) throw new IOException("chunked answer ended early");
            if (b != '\r') sb.append((char) b);
        }
        return sb.toString();
    }
}
