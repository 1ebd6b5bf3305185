package io.gpupool.server.api;

import io.gpupool.server.auth.Principal;
import io.gpupool.server.auth.Role;
import io.gpupool.server.core.Change;
import io.gpupool.server.core.PoolService;
import io.javalin.http.Context;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The server-sent-events stream {@code /api/v1/events}: {@code job} events for every committed job change
 * (members get only their tenant's) and a {@code pool} event with the pool snapshot every second.
 *
 * <p>Each client is served by its own request thread (a virtual thread), which writes what the hub queues
 * for it; one hub thread fans changes out. So the engine loop and the store writer never wait on a client,
 * and a client that falls more than {@value #CLIENT_BACKLOG} messages behind is disconnected.
 */
public final class EventHub implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventHub.class);
    private static final long POOL_EVERY_MS = 1000;
    private static final int CLIENT_BACKLOG = 1000;
    private static final String END = "";

    private record Client(Principal principal, BlockingQueue<String> outbox) {}

    private final List<Client> clients = new CopyOnWriteArrayList<>();
    private final LinkedBlockingQueue<List<Change>> changes = new LinkedBlockingQueue<>(10_000);
    private volatile PoolService pool;
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

    public int clientCount() { return clients.size(); }

    /** Serves one client until it goes away or the server stops. */
    void stream(Context ctx) {
        // as GET /api/v1/pool: an agent's join token or a node's credential has no business reading the pool
        Principal p = Requests.require(ctx, "read events", Role.ADMIN, Role.MEMBER);
        HttpServletResponse res = ctx.res();
        res.setStatus(200);
        res.setContentType("text/event-stream");
        res.setCharacterEncoding("UTF-8");
        res.setHeader("Cache-Control", "no-cache");
        res.setHeader("X-Accel-Buffering", "no");
        Client c = new Client(p, new LinkedBlockingQueue<>(CLIENT_BACKLOG));
        c.outbox().add(message("hello", Map.of("role", p.role().wire(), "tenant", p.tenant() == null ? "" : p.tenant())));
        if (pool != null) c.outbox().add(message("pool", pool.snapshot().visibleTo(p)));
        clients.add(c);
        try {
            OutputStream out = res.getOutputStream();
            while (running) {
                String m = c.outbox().poll(15, TimeUnit.SECONDS);
                if (m == END) break;
                out.write((m == null ? ": keep-alive\n\n" : m).getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
        } catch (IOException e) {
            // the client went away
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            clients.remove(c);
        }
    }

    private void run() {
        long nextPool = 0;
        while (running) {
            try {
                List<Change> batch = changes.poll(Math.max(1, nextPool - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
                if (batch != null) {
                    for (Client c : clients) {
                        for (Change ch : batch) if (c.principal().sees(ch.tenant())) offer(c, message("job", ch));
                    }
                }
                long now = System.currentTimeMillis();
                if (now >= nextPool) {
                    nextPool = now + POOL_EVERY_MS;
                    PoolService pl = pool;
                    if (pl != null) for (Client c : clients) offer(c, message("pool", pl.snapshot().visibleTo(c.principal())));
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                LOG.warn("SSE fan-out failed", e);
            }
        }
    }

    private void offer(Client c, String message) {
        if (!c.outbox().offer(message)) {
            clients.remove(c); // too far behind: its stream ends, the client reconnects and starts fresh
            c.outbox().clear();
            c.outbox().offer(END);
        }
    }

    private static String message(String event, Object data) {
        return "event: " + event + "\ndata: " + Json.write(data) + "\n\n";
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        for (Client c : clients) {
            c.outbox().clear();
            c.outbox().offer(END);
        }
    }
}
