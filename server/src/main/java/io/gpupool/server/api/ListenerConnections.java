package io.gpupool.server.api;

import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.server.ServerConnector;

import java.io.IOException;
import java.nio.channels.Channel;
import java.nio.channels.SelectableChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The connections of one listener, for a stop that loses no request it took in.
 *
 * <p>A standby's takeover ({@link StandbyServer#close}): the listening socket is closed first ({@link #closePort}), so it
 * leaves the port's SO_REUSEPORT group and every new connection goes to the active's listener; the connections already
 * taken in are then given the time to be answered ({@link #awaitClosed}; a standby answers at once and closes each
 * connection after its answer). Without this a request accepted just before the stop was cut off unanswered: "empty
 * reply from server" to a client polling {@code /healthz} through a takeover (InstallDocTest, in CI).
 *
 * <p>Jetty (12.1.13, 12.1.14) can take a connection in while it stops and then neither read it nor close it: the request
 * sits unread and its client waits for its own time-out. Every connection Jetty accepts is remembered until it reports
 * it closed; once the listener has stopped, whatever is still open is closed ({@link #closeLeftovers}), so its client
 * sees the connection end and retries elsewhere at once. (The other way a stop leaked a connection, an acceptor thread
 * interrupted just after the kernel accepted one, is avoided by accepting in the selector: {@link ApiServer#ACCEPTORS}.)
 */
final class ListenerConnections implements SelectorManager.AcceptListener {
    private final Set<SelectableChannel> open = ConcurrentHashMap.newKeySet();
    private volatile ServerConnector connector;

    /** The listener whose connections these are. */
    void watch(ServerConnector listener) {
        this.connector = listener;
        listener.getSelectorManager().addEventListener(this);
    }

    @Override
    public void onAccepting(SelectableChannel channel) {
        open.add(channel);
    }

    @Override
    public void onClosed(SelectableChannel channel) {
        synchronized (open) {
            open.remove(channel);
            open.notifyAll();
        }
    }

    /**
     * Closes the listening socket, leaving what it accepted open: the kernel takes it out of the port's SO_REUSEPORT
     * group at once. (With no acceptor threads Jetty's own close leaves the socket to the selector's stop.)
     */
    void closePort() {
        ServerConnector c = connector;
        if (c != null && c.getTransport() instanceof Channel port) closeQuietly(port);
    }

    /** Waits until every accepted connection is closed, at most {@code ms}. */
    void awaitClosed(long ms) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        synchronized (open) {
            open.removeIf(c -> !c.isOpen());
            while (!open.isEmpty()) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) return;
                try {
                    open.wait(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                open.removeIf(c -> !c.isOpen());
            }
        }
    }

    /** Connections taken in and not yet closed. */
    int openCount() {
        return (int) open.stream().filter(Channel::isOpen).count();
    }

    /** After the listener's stop: closes what Jetty left open. */
    void closeLeftovers() {
        for (SelectableChannel c : open) closeQuietly(c);
        open.clear();
    }

    private static void closeQuietly(Channel c) {
        if (!c.isOpen()) return;
        try {
            c.close();
        } catch (IOException e) {
            // closing is all that can be done: a failure leaves nothing else to try
        }
    }
}
