package io.gpupool.store;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A standby's warm copy of what a takeover needs (high availability, docs/architecture.md "Warm standby"): the state
 * {@link Store#recover} reads, kept up to date by reading only what changed. The first {@link #catchUp} reads everything;
 * each later one reads the jobs whose {@code change_seq} (the number of the writer's transaction that last touched the
 * job, its allocation or one of its attempts) is above the highest it has seen, their allocations and attempts, and the
 * small tables (tenants, tokens, nodes and their progress, settings, open usage rows, arrays with a failed task) whole. Each catch-up reads one snapshot (REPEATABLE
 * READ on PostgreSQL), and the one writer numbers its transactions in commit order, so a snapshot holding transaction N
 * holds every one before it: nothing is skipped. {@link #state()} then equals what {@link Store#recover} reads from the
 * same store, in the same order (StoreFollowerTest compares them). Each catch-up also checks the copy against the snapshot
 * (the highest job seq, the number of queued and running jobs) and reads everything again where they differ: a writer of a
 * release before schema version 8, during a rolling upgrade, does not number its changes.
 *
 * <p>Not thread-safe: one thread (the standby's) catches up and reads the state.
 */
public final class StoreFollower {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(StoreFollower.class);
    private final Database db;
    /** The highest change_seq read; -1 before the first catch-up. */
    private long watermark = -1;
    private final TreeMap<Long, JobRow> activeBySeq = new TreeMap<>();
    private final Map<String, Long> seqOfActive = new HashMap<>();
    private final TreeMap<String, List<GrantRow>> allocations = new TreeMap<>();
    private final TreeMap<String, Map<String, String>> attemptStates = new TreeMap<>();
    private final TreeMap<String, Map<String, Integer>> unfinished = new TreeMap<>();
    private final Map<String, String> idempotency = new HashMap<>();
    private long nextSeq = 1;
    private RecoveredState small;   // the small tables and the next event id, read whole at each catch-up
    private int lastChangedJobs;

    public StoreFollower(Database db) {
        this.db = db;
    }

    /** Reads what changed since the last catch-up (everything the first time). Returns the number of jobs read. */
    public int catchUp() {
        try (Connection c = db.connection()) {
            c.setAutoCommit(false);
            if (db.dialect() == Database.Dialect.POSTGRESQL) c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            try {
                long top = RecoveryReads.lastChange(c);   // first: the snapshot holds every change up to it
                int n = watermark < 0 ? readAll(c) : readChanged(c, watermark);
                if (!agrees(c)) {
                    // a writer that does not number its changes (an older release, during a rolling upgrade): read it all
                    LOG.warn("the store has jobs this standby's copy lacks (a writer of a release before schema version 8?); reading it all back");
                    clear();
                    n = readAll(c);
                }
                // usage rows of unreleased grants (one per running grant) and the arrays with a failed task: small, read whole
                small = new RecoveredState(RecoveryReads.tenants(c), RecoveryReads.tokens(c), RecoveryReads.nodes(c), RecoveryReads.progress(c),
                        RecoveryReads.settings(c), List.of(), Map.of(), Map.of(), Map.of(), Map.of(), 0, RecoveryReads.nextEventId(c),
                        UsageStore.open(c), RecoveryReads.arraysWithFailures(c), RecoveryReads.reservations(c));
                watermark = top;
                lastChangedJobs = n;
                return n;
            } finally {
                c.rollback();   // read only: nothing to keep, and the snapshot ends
            }
        } catch (SQLException e) {
            throw new StoreException("cannot follow the store", e);
        }
    }

    private int readAll(Connection c) throws SQLException {
        List<JobRow> active = RecoveryReads.activeJobs(c);
        for (JobRow j : active) {
            activeBySeq.put(j.seq(), j);
            seqOfActive.put(j.id(), j.seq());
        }
        allocations.putAll(RecoveryReads.allocations(c, RecoveryReads.ALL));
        attemptStates.putAll(RecoveryReads.attemptStates(c, RecoveryReads.ALL));
        unfinished.putAll(RecoveryReads.unfinishedAttempts(c, RecoveryReads.ALL));
        idempotency.putAll(RecoveryReads.idempotency(c));
        nextSeq = RecoveryReads.nextSeq(c);
        return active.size();
    }

    /** A cheap check of the copy against the snapshot: the same highest job seq and the same number of queued and running jobs. */
    private boolean agrees(Connection c) throws SQLException {
        return RecoveryReads.nextSeq(c) == nextSeq && RecoveryReads.activeCount(c) == activeBySeq.size();
    }

    private void clear() {
        activeBySeq.clear();
        seqOfActive.clear();
        allocations.clear();
        attemptStates.clear();
        unfinished.clear();
        idempotency.clear();
        nextSeq = 1;
    }

    private int readChanged(Connection c, long since) throws SQLException {
        List<JobRow> changed = RecoveryReads.changedJobs(c, since);
        if (changed.isEmpty()) return 0;
        for (JobRow j : changed) {
            Long old = seqOfActive.remove(j.id());
            if (old != null) activeBySeq.remove(old);
            if (j.active()) {
                activeBySeq.put(j.seq(), j);
                seqOfActive.put(j.id(), j.seq());
            }
            allocations.remove(j.id());
            attemptStates.remove(j.id());
            unfinished.remove(j.id());
            if (j.idemKey() != null) idempotency.put(j.tenant() + "\n" + j.idemKey(), j.id());
            nextSeq = Math.max(nextSeq, j.seq() + 1);
        }
        allocations.putAll(RecoveryReads.allocations(c, since));
        attemptStates.putAll(RecoveryReads.attemptStates(c, since));
        unfinished.putAll(RecoveryReads.unfinishedAttempts(c, since));
        return changed.size();
    }

    /** The highest transaction number read (the writer's change_seq); -1 before the first catch-up. */
    public long watermark() { return watermark; }

    /** How many jobs the last catch-up read. */
    public int lastChangedJobs() { return lastChangedJobs; }

    /**
     * The state as of the last catch-up, as {@link Store#recover} would have read it then. Its idempotency map is a view of
     * the follower's own (it can be large; the engine copies it): use the state before the next catch-up.
     */
    public RecoveredState state() {
        if (small == null) throw new IllegalStateException("catchUp() first");
        // fresh hash maps filled in job-id order, as the full read fills them: the same iteration order as well as content
        return new RecoveredState(small.tenants(), small.tokens(), small.nodes(), small.progress(), small.settings(),
                List.copyOf(activeBySeq.values()), copy(allocations), copy(attemptStates), copy(unfinished),
                Collections.unmodifiableMap(idempotency), nextSeq, small.nextEventId(), small.openUsage(), small.arraysWithFailures(),
                small.reservations());
    }

    private static <V> Map<String, V> copy(TreeMap<String, V> byJob) {
        Map<String, V> out = new HashMap<>();
        byJob.forEach(out::put);
        return out;
    }
}
