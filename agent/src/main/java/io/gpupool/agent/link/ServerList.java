package io.gpupool.agent.link;

import io.gpupool.model.SpecException;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/**
 * The replicas of one gpupool service a client knows ({@code --server URL1,URL2}, {@code GPUPOOL_SERVER}), and the one
 * it talks to now (high availability). A client moves on when the current one cannot be reached, or answers as a
 * standby (503 with the {@value #ACTIVE_HEADER} header): to the replica that header names when it is one of the list,
 * else to the next. A URL outside the list is never followed: the client's token goes only where it was told.
 */
public final class ServerList {
    /** The header of a standby's answers: the active replica's URL. */
    public static final String ACTIVE_HEADER = "X-Gpupool-Active";

    private final List<URI> servers;
    private volatile int current;

    private ServerList(List<URI> servers) {
        this.servers = List.copyOf(servers);
    }

    /** Comma-separated http:// or https:// URLs; {@code option} names the setting in errors. */
    public static ServerList parse(String urls, String option) {
        List<URI> out = new ArrayList<>();
        for (String part : (urls == null ? "" : urls).split(",")) {
            String u = part.trim();
            if (u.isEmpty()) continue;
            while (u.endsWith("/")) u = u.substring(0, u.length() - 1);
            URI uri;
            try {
                uri = URI.create(u);
            } catch (IllegalArgumentException e) {
                throw new SpecException(option, "server", "'" + u + "' is not a URL: " + e.getMessage());
            }
            if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
                throw new SpecException(option, "server", "must be http:// or https:// URLs (comma-separated for several replicas), got '" + u + "'");
            }
            out.add(uri);
        }
        if (out.isEmpty()) throw new SpecException(option, "server", "is required: the server's URL (comma-separated for several replicas)");
        return new ServerList(out);
    }

    public URI current() { return servers.get(current); }

    public List<URI> all() { return servers; }

    public int size() { return servers.size(); }

    /** After a failure of {@code failed} (the URL the call went to): the next replica, unless another call moved on already. */
    public synchronized void next(URI failed) {
        if (servers.get(current).equals(failed)) current = (current + 1) % servers.size();
    }

    /**
     * A standby's answer named {@code active} (possibly empty): moves there if it is one of the list, else past
     * {@code failed}. Returns whether the client should try again at once (it moved to a named active replica).
     */
    public synchronized boolean follow(URI failed, String active) {
        if (active != null && !active.isBlank()) {
            String a = active.trim();
            while (a.endsWith("/")) a = a.substring(0, a.length() - 1);
            for (int i = 0; i < servers.size(); i++) {
                if (servers.get(i).toString().equals(a)) {
                    boolean moved = i != current;
                    current = i;
                    return moved;
                }
            }
        }
        next(failed);
        return false;
    }

    /** How long a replica a client could not reach counts as gone: past it, a standby naming it is believed again. */
    public static final long GONE_FOR_MS = 1000;

    /**
     * Whether a standby's answer naming {@code active} (possibly empty) means a takeover is coming: it names no active
     * replica, or one this client failed to reach in the last {@value #GONE_FOR_MS} ms ({@code unreachable}: replica ->
     * {@link System#nanoTime} of the failure). That standby, or another, takes the lease over within moments, so a client
     * asks it again shortly rather than going back to the dead one; a replica that failed once but lives is tried again
     * after that second.
     */
    public static boolean awaitsTakeover(String active, java.util.Map<URI, Long> unreachable) {
        String a = active == null ? "" : active.trim();
        while (a.endsWith("/")) a = a.substring(0, a.length() - 1);
        if (a.isEmpty()) return true;
        long now = System.nanoTime();
        for (var e : unreachable.entrySet()) {
            if (e.getKey().toString().equals(a) && now - e.getValue() < java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(GONE_FOR_MS)) return true;
        }
        return false;
    }
}
