package io.gpupool.cli;

import io.gpupool.agent.tls.ServerTrust;

import javax.net.ssl.SSLSocket;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One HTTP/1.1 keep-alive connection that sends a JSON POST and reads the answer's status, skipping its body
 * (Content-Length or chunked): just what the load generator needs, at a small fraction of the JDK HttpClient's CPU per request.
 * An https:// server gets TLS with the host name checked, as the JDK's client would. Not thread-safe: one request at a time.
 */
final class KeepAliveConnection implements AutoCloseable {
    record Response(int status, boolean keepAlive) {}

    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;
    private final String hostHeader;

    KeepAliveConnection(URI server, ServerTrust trust) throws IOException {
        boolean https = "https".equals(server.getScheme());
        int port = server.getPort() > 0 ? server.getPort() : https ? 443 : 80;
        Socket tcp = new Socket();
        tcp.setTcpNoDelay(true);
        tcp.connect(new InetSocketAddress(server.getHost(), port), 5_000);
        tcp.setSoTimeout(60_000);
        if (https) {
            try {
                SSLSocket tls = (SSLSocket) trust.sslContext().getSocketFactory().createSocket(tcp, server.getHost(), port, true);
                tls.setSSLParameters(ServerTrust.verifyingHost(tls.getSSLParameters()));
                tls.startHandshake();
                socket = tls;
            } catch (IOException e) {
                tcp.close();
                throw e;
            }
        } else {
            socket = tcp;
        }
        out = socket.getOutputStream();
        in = new BufferedInputStream(socket.getInputStream(), 8192);
        hostHeader = server.getHost() + ":" + port;
    }

    Response post(String path, String bearer, String idempotencyKey, byte[] json) throws IOException {
        String head = "POST " + path + " HTTP/1.1\r\nHost: " + hostHeader + "\r\nAuthorization: Bearer " + bearer
                + "\r\nContent-Type: application/json\r\nIdempotency-Key: " + idempotencyKey
                + "\r\nContent-Length: " + json.length + "\r\n\r\n";
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        byte[] request = new byte[h.length + json.length];
        System.arraycopy(h, 0, request, 0, h.length);
        System.arraycopy(json, 0, request, h.length, json.length);
        out.write(request);
        out.flush();
        String statusLine = line();
        String[] parts = statusLine.split(" ", 3);
        if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) throw new IOException("not an HTTP answer: " + statusLine);
        int status = Integer.parseInt(parts[1]);
        long length = -1;
        boolean chunked = false;
        boolean keepAlive = parts[0].equals("HTTP/1.1");
        for (String l = line(); !l.isEmpty(); l = line()) {
            int colon = l.indexOf(':');
            if (colon < 0) continue;
            String name = l.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = l.substring(colon + 1).trim();
            switch (name) {
                case "content-length" -> length = Long.parseLong(value);
                case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                case "connection" -> keepAlive = !value.equalsIgnoreCase("close");
                default -> { }
            }
        }
        if (chunked) {
            for (long size = chunkSize(); size > 0; size = chunkSize()) {
                in.skipNBytes(size);
                line();
            }
            while (!line().isEmpty()) { } // trailers
        } else if (length >= 0) {
            in.skipNBytes(length);
        } else {
            in.transferTo(OutputStream.nullOutputStream()); // no length: the body ends with the connection
            keepAlive = false;
        }
        return new Response(status, keepAlive);
    }

    /** A chunk's size line (hexadecimal, extensions after ';' ignored). */
    private long chunkSize() throws IOException {
        return Long.parseLong(line().split(";", 2)[0].trim(), 16);
    }

    /** One header line without its CRLF. */
    private String line() throws IOException {
        StringBuilder sb = new StringBuilder(64);
        int c;
        while ((c = in.read()) != '\n') {
            if (c < 0) throw new EOFException("connection closed");
            if (c != '\r') sb.append((char) c);
        }
        return sb.toString();
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing a socket that failed: nothing to do
        }
    }
}
