package io.gpupool.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on loopback that can cut the line like a network partition: while cut, nothing is forwarded
 * in either direction (connections stay open, requests hang until their time-out); when the line is back,
 * the connections held meanwhile are closed and new ones are forwarded again.
 */
final class PausableProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int target;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private volatile boolean cut;
    private volatile boolean closed;

    PausableProxy(int targetPort) throws IOException {
        this.target = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(this::accept);
    }

    int port() {
        return listener.getLocalPort();
    }

    void cut() {
        cut = true;
    }

    void restore() {
        synchronized (gate) {
            for (Socket s : open) closeQuietly(s);
            open.clear();
            cut = false;
            gate.notifyAll();
        }
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                open.add(client);
                Thread.ofVirtual().start(() -> connect(client));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void connect(Socket client) {
        try {
            awaitLine();
            Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
            open.add(upstream);
            Thread.ofVirtual().start(() -> pump(client, upstream));
            pump(upstream, client);
        } catch (IOException | InterruptedException e) {
            closeQuietly(client);
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buf = new byte[16 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                awaitLine();
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            // either side closed
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    /** Blocks while the line is cut. */
    private void awaitLine() throws InterruptedException {
        synchronized (gate) {
            while (cut && !closed) gate.wait();
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        restore();
        listener.close();
    }
}
