package io.gpupool.server.core;

import io.gpupool.agent.protocol.LogChunk;
import io.gpupool.agent.protocol.LogOffset;
import io.gpupool.store.OutputChunk;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * How much of each output stream the store holds (and will hold once this iteration commits), owned by the
 * engine loop. A chunk is appended only when it continues exactly what is held: bytes already held are
 * skipped, a chunk beyond a gap is refused, and the answer is always the length held, so the agent resends
 * from there. That makes a chunk resent after a lost answer harmless.
 */
public final class OutputLedger {

    /** One stream of one attempt on one node; stream is stdout or stderr. */
    public record Key(String jobId, int attempt, String node, String stream) {}

    public static Key key(LogChunk c, String node) {
        return new Key(c.jobId(), c.attempt(), node, c.stream().name().toLowerCase(java.util.Locale.ROOT));
    }

    /** What to do with a chunk: the write (null: nothing to store) and the length to acknowledge. */
    record Appended(OutputChunk write, LogOffset ack) {}

    private static final long FORGET_COMPLETE_AFTER_MS = 10 * 60_000;

    private static final class Held {
        long length;
        boolean complete;
        long completedAtMs;
    }

    private final Map<Key, Held> held = new HashMap<>();

    /**
     * @param stored what the store held when the request came in (read outside the loop); counts only for a
     *               stream this ledger has not seen in this process
     */
    Appended append(String node, LogChunk c, long stored, long nowMs) {
        Key k = key(c, node);
        Held h = held.computeIfAbsent(k, x -> {
            Held n = new Held();
            n.length = stored;
            return n;
        });
        OutputChunk write = null;
        long end = c.offset() + c.data().length;
        if (c.offset() <= h.length && (end > h.length || (c.complete() && end == h.length && !h.complete))) {
            byte[] tail = Arrays.copyOfRange(c.data(), (int) (h.length - c.offset()), c.data().length);
            write = new OutputChunk(k.jobId(), k.attempt(), node, k.stream(), h.length, tail, c.complete(), nowMs);
            h.length = end;
            if (c.complete()) {
                h.complete = true;
                h.completedAtMs = nowMs;
            }
        }
        return new Appended(write, new LogOffset(c.jobId(), c.attempt(), c.stream(), h.length, c.submittedMs()));
    }

    /** Drops streams complete for a while (a late resend then reads the stored length again). */
    void forgetOld(long nowMs) {
        for (Iterator<Held> it = held.values().iterator(); it.hasNext(); ) {
            Held h = it.next();
            if (h.complete && nowMs - h.completedAtMs > FORGET_COMPLETE_AFTER_MS) it.remove();
        }
    }
}
