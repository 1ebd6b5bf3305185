package io.gpupool.server.core;

import io.gpupool.server.core.Dependency.Condition;
import io.gpupool.server.core.Dependency.Type;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Which queued jobs wait for which jobs and arrays ({@link Dependency}), and what every active job is to them: its
 * start and end meet or break its waiters' conditions. Every change is found from the job that changed (its waiters
 * are indexed by it), never by a scan of the queue. Loop thread only.
 */
final class DependencyBook {
    /**
     * A waiting job's conditions changed: some were met (its {@code dependency} holds the rest), or one can never be
     * met ({@code never} says why).
     */
    record Change(ActiveJob job, String never) {}

    private final PoolState pool;
    private final Map<String, Set<String>> waitersOf = new HashMap<>();       // job or array -> jobs waiting for it
    private final Map<String, TreeMap<Long, String>> byName = new HashMap<>(); // tenant, user, name -> active jobs by seq
    private final Map<String, Integer> pendingTasks = new HashMap<>();        // active array -> its tasks not started
    private final Set<String> arraysWithFailures = new HashSet<>();            // active arrays: a task ended not succeeded

    DependencyBook(PoolState pool, Set<String> arraysWithFailures) {
        this.pool = pool;
        this.arraysWithFailures.addAll(arraysWithFailures);
    }

    private static String nameKey(ActiveJob a) {
        return a.tenant() + "\n" + a.request.user() + "\n" + a.request.name();
    }

    // ---- every active job, as a possible target ---------------------------------------------------

    /** The job is active (queued, or restored after a restart). */
    void activated(ActiveJob a) {
        byName.computeIfAbsent(nameKey(a), k -> new TreeMap<>()).put(a.row.seq(), a.id());
        if (a.array != null && a.row.state().equals("PENDING")) pendingTasks.merge(a.array.arrayId(), 1, Integer::sum);
    }

    /** The job started: its waiters' {@code after} is met (an array's once every task started). */
    List<Change> started(ActiveJob a) {
        List<Change> changes = new ArrayList<>();
        resolve(a.id(), c -> c.type() == Type.AFTER ? Verdict.MET : Verdict.WAIT, "started", changes);
        if (a.array != null) {
            String arrayId = a.array.arrayId();
            if (pendingTasks.merge(arrayId, -1, Integer::sum) <= 0) {
                pendingTasks.remove(arrayId);
                resolve(arrayId, c -> c.type() == Type.AFTER ? Verdict.MET : Verdict.WAIT, "started", changes);
            }
        }
        return changes;
    }

    /** The job went back to the queue. */
    void requeued(ActiveJob a) {
        if (a.array != null) pendingTasks.merge(a.array.arrayId(), 1, Integer::sum);
    }

    /**
     * The job ended in {@code state} (it is no longer active): its waiters' conditions are met or broken; a singleton
     * of the same name next in line may start.
     *
     * @param wasPending it ended before it started (cancelled, failed while queued)
     */
    List<Change> ended(ActiveJob a, String state, boolean wasPending) {
        List<Change> changes = new ArrayList<>();
        forget(a);
        TreeMap<Long, String> same = byName.get(nameKey(a));
        if (same != null) {
            same.remove(a.row.seq());
            if (same.isEmpty()) byName.remove(nameKey(a));
            else singletonTurn(same.firstEntry().getValue(), changes);
        }
        resolve(a.id(), c -> ended(c, state), "ended " + state, changes);
        if (a.array == null) return changes;
        String arrayId = a.array.arrayId();
        if (wasPending && pendingTasks.merge(arrayId, -1, Integer::sum) <= 0) {
            pendingTasks.remove(arrayId);
            resolve(arrayId, c -> c.type() == Type.AFTER ? Verdict.MET : Verdict.WAIT, "started", changes);
        }
        boolean ok = state.equals("SUCCEEDED");
        if (!ok) arraysWithFailures.add(arrayId);
        if (!pool.arrays.containsKey(arrayId)) {
            // its last task: the array ended, in failure if any task did
            String whole = arraysWithFailures.remove(arrayId) ? "FAILED" : "SUCCEEDED";
            pendingTasks.remove(arrayId);
            resolve(arrayId, c -> ended(c, whole), whole.equals("SUCCEEDED") ? "ended, every task SUCCEEDED" : "ended, not every task SUCCEEDED", changes);
        } else if (!ok) {
            resolve(arrayId, c -> c.type() == Type.AFTEROK ? Verdict.NEVER : c.type() == Type.AFTERNOTOK ? Verdict.NOT_OK_SEEN : Verdict.WAIT,
                    "task " + a.id() + " ended " + state, changes);
        }
        return changes;
    }

    private static Verdict ended(Condition c, String state) {
        return switch (c.type()) {
            case AFTER, AFTERANY -> Verdict.MET;
            case AFTEROK -> state.equals("SUCCEEDED") ? Verdict.MET : Verdict.NEVER;
            case AFTERNOTOK -> !state.equals("SUCCEEDED") || c.notOkSeen() ? Verdict.MET : Verdict.NEVER;
        };
    }

    // ---- waiting jobs -----------------------------------------------------------------------------

    private enum Verdict { WAIT, MET, NEVER, NOT_OK_SEEN }

    /**
     * Before a submission changes anything: every job or array named is active here or ended in the store; one the
     * store saw active that is no longer active here ended while the request was on its way (asking again resolves it).
     */
    static void check(PoolState pool, Dependency d, Map<String, Dependency.Target> known) {
        if (d == null) return;
        for (String t : d.targets()) {
            if (pool.active.containsKey(t) || pool.arrays.containsKey(t)) continue;
            Dependency.Target k = known.get(t);
            if (k == null) throw ServiceException.invalid(Dependency.FIELD, "unknown job '" + t + "'");
            if (k.finalState() == null) {
                throw ServiceException.conflict(Dependency.FIELD, "job " + t + " ended while this job was submitted; submit it again");
            }
        }
    }

    /**
     * Registers what a queued job waits for (at submission, or after a restart with no {@code known} targets) and
     * returns how it stands: conditions already met are dropped from its dependency ({@link #check} first).
     */
    Change waitFor(ActiveJob a, Map<String, Dependency.Target> known) {
        Dependency d = a.dependency;
        List<Condition> remaining = new ArrayList<>();
        String never = null;
        List<String> register = new ArrayList<>();
        for (Condition c : d.conditions()) {
            String t = c.target();
            Verdict v;
            Condition kept = c;
            if (pool.active.containsKey(t)) {
                v = c.type() == Type.AFTER && pool.active.get(t).row.state().equals("RUNNING") ? Verdict.MET : Verdict.WAIT;
            } else if (pool.arrays.containsKey(t)) {
                boolean failed = arraysWithFailures.contains(t) || known.containsKey(t) && known.get(t).notOk();
                if (failed) arraysWithFailures.add(t);
                v = c.type() == Type.AFTER && !pendingTasks.containsKey(t) ? Verdict.MET
                        : c.type() == Type.AFTEROK && failed ? Verdict.NEVER : Verdict.WAIT;
                if (c.type() == Type.AFTERNOTOK && failed) kept = new Condition(c.type(), t, true);
            } else {
                Dependency.Target k = known.get(t);   // null after a restart
                // after a restart a condition left on an ended job is one that could never be met
                v = k == null ? (c.type() == Type.AFTER || c.type() == Type.AFTERANY ? Verdict.MET : Verdict.NEVER)
                        : ended(new Condition(c.type(), t, k.notOk()), k.finalState());
                if (v == Verdict.NEVER) never = describe(c, k == null ? "ended before the restart" : "ended " + k.finalState());
            }
            if (v == Verdict.NEVER && never == null) never = describe(c, "has a task that did not succeed");
            if (v != Verdict.MET) {
                remaining.add(kept);
                register.add(t);
            }
        }
        a.dependency = d.with(remaining);
        for (String t : register) waitersOf.computeIfAbsent(t, k -> new LinkedHashSet<>()).add(a.id());
        if (a.dependency.singleton()) {
            TreeMap<Long, String> same = byName.get(nameKey(a));
            if (same == null || same.firstKey() == a.row.seq()) a.dependency = new Dependency(a.dependency.conditions(), false, a.dependency.killOnInvalid());
        }
        return new Change(a, never);
    }

    /** The job no longer waits (it ended, or its dependency is replaced). */
    void forget(ActiveJob a) {
        if (a.dependency == null) return;
        for (String t : a.dependency.targets()) {
            Set<String> w = waitersOf.get(t);
            if (w != null && w.remove(a.id()) && w.isEmpty()) waitersOf.remove(t);
        }
    }

    /** The job is first of its name: a singleton may start. */
    private void singletonTurn(String jobId, List<Change> changes) {
        ActiveJob w = pool.active.get(jobId);
        if (w == null || w.dependency == null || !w.dependency.singleton()) return;
        w.dependency = new Dependency(w.dependency.conditions(), false, w.dependency.killOnInvalid());
        changes.add(new Change(w, null));
    }

    /** Applies a target's change to the conditions of the jobs waiting for it. */
    private void resolve(String target, java.util.function.Function<Condition, Verdict> verdict, String how, List<Change> changes) {
        Set<String> waiters = waitersOf.get(target);
        if (waiters == null) return;
        for (String id : List.copyOf(waiters)) {
            ActiveJob w = pool.active.get(id);
            if (w == null || w.dependency == null) continue;
            List<Condition> remaining = new ArrayList<>();
            String never = null;
            boolean changed = false;
            boolean stillWaits = false;
            for (Condition c : w.dependency.conditions()) {
                Verdict v = c.target().equals(target) ? verdict.apply(c) : Verdict.WAIT;
                switch (v) {
                    case MET -> changed = true;
                    case NOT_OK_SEEN -> {
                        if (!c.notOkSeen()) changed = true;
                        remaining.add(new Condition(c.type(), c.target(), true));
                        stillWaits |= c.target().equals(target);
                    }
                    case NEVER -> {
                        never = describe(c, how);
                        remaining.add(c);
                        changed = true;
                        stillWaits |= c.target().equals(target);
                    }
                    case WAIT -> {
                        remaining.add(c);
                        stillWaits |= c.target().equals(target);
                    }
                }
            }
            if (!stillWaits) {
                waiters.remove(id);
                if (waiters.isEmpty()) waitersOf.remove(target);
            }
            if (changed) {
                w.dependency = w.dependency.with(remaining);
                changes.add(new Change(w, never));
            }
        }
    }

    private static String describe(Condition c, String how) {
        return c + " can never be met: " + c.target() + " " + how;
    }

    /** Why the job waits for others, or null when it waits for none. */
    static String reason(ActiveJob a) {
        Dependency d = a.dependency;
        if (d == null || !d.waits()) return null;
        return "waits for dependency " + d;
    }
}
