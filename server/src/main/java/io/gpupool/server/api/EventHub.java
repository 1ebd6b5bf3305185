package io.gpupool.server.api;

import io.gpupool.server.auth.Principal;
import io.gpupool.server.core.Change;
import io.gpupool.server.core.PoolService;
import io.javalin.http.sse.SseClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The server-sent-events stream {@code /api/v1/events}: {@code job} events for every committed job change
 * (members get only their tenant's) and a {@code pool} event with the pool snapshot every second. One
 * thread sends to all clients, so the engine loop and the store writer never wait on a slow client.
 */
public final class EventHub implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventHub.class);
    private static final long POOL_EVERY_MS = 1000;

    private record Client(SseClient sse, Principal principal) {}

    private final List<Client> clients = new CopyOnWriteArrayList<>();
    private final LinkedBlockingQueue<List<Change>> changes = new LinkedBlockingQueue<>(10_000);
    private PoolService pool;
    private final Thread thread;
    private volatile boolean running = true;

    public EventHub() {
        this.thread = Thread.ofPlatform().name("gpupool-sse").daemon(true).start(this::run);
    }

    public void attach(PoolService pool) {
        this.pool = pool;
    }

    /** Called after a commit (on the writer's thread): only enqueues. */
    public void publish(List<Change> committed) {
        if (!committed.isEmpty() && !clients.isEmpty() && !changes.offer(committed)) {
            LOG.warn("SSE backlog full; dropping {} changes", committed.size());
        }
    }

    void connect(SseClient sse) {
        Principal p = Requests.principal(sse.ctx());
        Client c = new Client(sse, p);
        sse.keepAlive();
        sse.onClose(() -> clients.remove(c));
        clients.add(c);
        send(c, "hello", Map.of("role", p.role().wire(), "tenant", p.tenant() == null ? "" : p.tenant()));
        if (pool != null) send(c, "pool", pool.snapshot().visibleTo(p));
    }

    public int clientCount() { return clients.size(); }

    private void run() {
        long nextPool = 0;
        while (running) {
            try {
                List<Change> batch = changes.poll(Math.max(1, nextPool - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
                if (batch != null) {
                    for (Client c : clients) {
                        for (Change ch : batch) if (c.principal().sees(ch.tenant())) send(c, "job", ch);
                    }
                }
                long now = System.currentTimeMillis();
                if (now >= nextPool) {
                    nextPool = now + POOL_EVERY_MS;
                    if (pool != null) for (Client c : clients) send(c, "pool", pool.snapshot().visibleTo(c.principal()));
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                LOG.warn("SSE send failed", e);
            }
        }
    }

    private void send(Client c, String event, Object data) {
        if (c.sse().terminated()) {
            clients.remove(c);
            return;
        }
        try {
            c.sse().sendEvent(event, Json.write(data));
        } catch (RuntimeException e) {
            clients.remove(c);
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        clients.clear(); // the HTTP server's stop closes their connections

    }
}
