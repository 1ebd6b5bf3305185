package io.gpupool.server.api;

import org.eclipse.jetty.io.SelectorManager;

import java.io.IOException;
import java.nio.channels.SelectableChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Closes the connections a stopped listener left open. Jetty (12.1.13, 12.1.14) can take a connection in while it
 * stops and then neither read it nor close it: the request sits unread and its client waits for its own time-out.
 * Every connection Jetty accepts is remembered until it reports it closed; once the listener has stopped, whatever is
 * still open is closed, so its client sees the connection end and retries elsewhere at once. (The other way a stop
 * leaked a connection, an acceptor thread interrupted just after the kernel accepted one, is avoided by accepting in
 * the selector: {@link ApiServer#ACCEPTORS}.)
 */
final class LeftoverConnections implements SelectorManager.AcceptListener {
    private final Set<SelectableChannel> open = ConcurrentHashMap.newKeySet();

    @Override
    public void onAccepting(SelectableChannel channel) {
        open.add(channel);
    }

    @Override
    public void onClosed(SelectableChannel channel) {
        open.remove(channel);
    }

    /** After the listener's stop: closes what Jetty left open. */
    void closeAll() {
        for (SelectableChannel c : open) {
            if (!c.isOpen()) continue;
            try {
                c.close();
            } catch (IOException e) {
                // closing is all that can be done: a failure leaves nothing else to try
            }
        }
        open.clear();
    }
}
