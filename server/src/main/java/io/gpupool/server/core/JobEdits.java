package io.gpupool.server.core;

import io.gpupool.engine.SubmitResult;
import io.gpupool.server.auth.Principal;
import io.gpupool.store.JobRow;
import io.gpupool.store.Write;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Changes users make to their own active jobs (admins to any): hold and release a queued job, requeue a running one,
 * edit a queued one's priority, allowed GPU models, time limit (within its tenant's maximum) or dependency. Each is written to the job's spec and history (an
 * event naming who did it and what changed). Loop thread only.
 */
public final class JobEdits {
    /**
     * An edit of a queued job; a null field is left as it is.
     *
     * @param gpuTypes   the allowed GPU models (empty: any)
     * @param dependency the new dependency (with {@code known} as the store saw its targets); an empty one clears it
     * @param timeLimitSec the new time limit in seconds; 0 removes it (the tenant's default then applies, as at submission)
     */
    public record Update(Integer priority, List<String> gpuTypes, Dependency dependency, Map<String, Dependency.Target> known,
                         Long timeLimitSec) {
        public Update(Integer priority, List<String> gpuTypes, Dependency dependency, Map<String, Dependency.Target> known) {
            this(priority, gpuTypes, dependency, known, null);
        }
    }

    private final PoolState pool;
    private final JobLifecycle jobs;

    JobEdits(PoolState pool, JobLifecycle jobs) {
        this.pool = pool;
        this.jobs = jobs;
    }

    /** The active job if the caller may see it, else null (the caller then tells unknown from ended by the store). */
    private ActiveJob visible(String jobId, Principal by) {
        ActiveJob a = pool.active.get(jobId);
        return a != null && by.sees(a.tenant()) ? a : null;
    }

    private static String who(Principal by) {
        return "by " + by.role().wire() + " token " + by.tokenId();
    }

    private static void requireQueued(ActiveJob a, String what) {
        if (!a.row.state().equals("PENDING")) {
            throw ServiceException.conflict("state", "job " + a.id() + " is " + a.row.state() + "; only a queued job can be " + what);
        }
    }

    CompletableFuture<JobRow> hold(String jobId, Principal by) {
        pool.writes.requireStore();
        ActiveJob a = visible(jobId, by);
        if (a == null) return CompletableFuture.completedFuture(null);
        requireQueued(a, "held (requeue a running one first)");
        if (a.heldBy != null) throw ServiceException.conflict("state", "job " + a.id() + " is already held (" + a.heldBy + ")");
        a.heldBy = who(by);
        return changed(a, "HELD", a.heldBy);
    }

    CompletableFuture<JobRow> release(String jobId, Principal by) {
        pool.writes.requireStore();
        ActiveJob a = visible(jobId, by);
        if (a == null) return CompletableFuture.completedFuture(null);
        if (a.heldBy == null) throw ServiceException.conflict("state", "job " + a.id() + " is not held");
        a.heldBy = null;
        return changed(a, "RELEASED", who(by));
    }

    /** The edits that apply to a whole array: each applies to those of its tasks it fits (a queued, or a held one). */
    public enum ArrayEdit { HOLD, RELEASE, UPDATE }

    /**
     * Holds, releases or edits every task of an array the edit fits (queued tasks; held ones for a release); completes with
     * the tasks changed, or -1 when the array has no active task the caller may see. Each task's history gets the event.
     */
    CompletableFuture<Integer> onArray(String arrayId, ArrayEdit edit, Update u, Principal by) {
        pool.writes.requireStore();
        Set<String> tasks = pool.arrays.get(arrayId);
        if (tasks == null || !by.sees(pool.active.get(tasks.iterator().next()).tenant())) return CompletableFuture.completedFuture(-1);
        int n = 0;
        for (String id : List.copyOf(tasks)) {
            ActiveJob a = pool.active.get(id);
            if (!a.row.state().equals("PENDING")) continue;
            switch (edit) {
                case HOLD -> { if (a.heldBy == null) { hold(id, by); n++; } }
                case RELEASE -> { if (a.heldBy != null) { release(id, by); n++; } }
                case UPDATE -> { update(id, u, by); n++; }
            }
        }
        int changed = n;
        return pool.writes.commitOfThisIteration().thenApply(v -> changed);
    }

    /** A running job goes back to the queue (its process is stopped) and runs again as a new attempt. */
    CompletableFuture<JobRow> requeue(String jobId, Principal by) {
        pool.writes.requireStore();
        ActiveJob a = visible(jobId, by);
        if (a == null) return CompletableFuture.completedFuture(null);
        if (!a.row.state().equals("RUNNING")) {
            throw ServiceException.conflict("state", "job " + a.id() + " is " + a.row.state() + "; only a running job can be requeued");
        }
        long now = pool.clock.now();
        pool.engine.preempt(a.id(), now);
        jobs.requeued(a, "REQUEUED", "requeued " + who(by), now);
        pool.roundDue = true;
        JobRow row = a.row;
        return pool.writes.commitOfThisIteration().thenApply(v -> row);
    }

    CompletableFuture<JobRow> update(String jobId, Update u, Principal by) {
        pool.writes.requireStore();
        ActiveJob a = visible(jobId, by);
        if (a == null) return CompletableFuture.completedFuture(null);
        requireQueued(a, "updated");
        long now = pool.clock.now();
        List<String> changes = new ArrayList<>();
        if (u.dependency() != null) {
            DependencyBook.check(pool, u.dependency(), u.known());
            for (String t : u.dependency().targets()) {
                if (waitsFor(t, a.id(), new HashSet<>())) {
                    throw ServiceException.invalid(Dependency.FIELD, "waiting for " + t + " would make a cycle: " + t + " is " + a.id()
                            + " or waits for it");
                }
            }
        }
        JobRequest before = a.request;
        JobRequest after = before.edited(u.priority() != null ? u.priority() : before.priority(),
                u.gpuTypes() != null ? u.gpuTypes() : before.gpuTypes(), u.timeLimitSec() != null ? u.timeLimitSec() : before.timeLimitSec());
        if (u.timeLimitSec() != null) after = TenantTimeLimits.apply(after, pool.tenants.get(a.tenant()));
        if (!after.equals(before)) {
            SubmitResult r = pool.engine.replacePending(after.toJobSpec(a.id(), a.row.submittedMs()), now);
            if (!r.accepted()) throw NeverRuns.error(r.status(), after);
            a.request = after;
            if (after.priority() != before.priority()) changes.add("priority " + before.priority() + " -> " + after.priority());
            if (!after.gpuTypes().equals(before.gpuTypes())) changes.add("gpuTypes " + before.gpuTypes() + " -> " + after.gpuTypes());
            if (after.timeLimitSec() != before.timeLimitSec()) {
                changes.add("timeLimit " + limitText(before.timeLimitSec()) + " -> " + limitText(after.timeLimitSec()));
            }
        }
        DependencyBook.Change standing = null;
        if (u.dependency() != null) {
            String old = a.dependency == null ? "" : a.dependency.toString();
            jobs.dependencies().forget(a);
            a.dependency = u.dependency();
            a.dependencyNever = null;
            standing = jobs.dependencies().waitFor(a, u.known());
            changes.add("dependency '" + old + "' -> '" + u.dependency() + "'");
        }
        CompletableFuture<JobRow> done = changed(a, "UPDATED", String.join("; ", changes) + " " + who(by));
        if (standing != null && (standing.never() != null || !a.dependency.equals(u.dependency()))) jobs.applyDependencyChanges(List.of(standing), now);
        return done;
    }

    private static String limitText(long sec) {
        return sec > 0 ? io.gpupool.model.TimeLimit.format(sec) : "none";
    }

    /** Whether {@code from} (a job or an array) is {@code target} or waits for it, directly or through others. */
    private boolean waitsFor(String from, String target, Set<String> seen) {
        if (from.equals(target)) return true;
        if (!seen.add(from)) return false;
        List<ActiveJob> nodes = new ArrayList<>();
        ActiveJob j = pool.active.get(from);
        if (j != null) nodes.add(j);
        for (String task : pool.arrays.getOrDefault(from, Set.of())) nodes.add(pool.active.get(task));
        for (ActiveJob n : nodes) {
            if (n.id().equals(target)) return true;
            if (n.dependency == null) continue;
            for (String t : n.dependency.targets()) if (waitsFor(t, target, seen)) return true;
        }
        return false;
    }

    /** Writes the job's spec and the event, and holds or releases it for its reasons now. */
    private CompletableFuture<JobRow> changed(ActiveJob a, String type, String detail) {
        long now = pool.clock.now();
        a.row = a.row.withSpec(a.spec().toJson());
        pool.writes.add(new Write.UpdateSpec(a.id(), a.row.spec()));
        jobs.event(a, type, detail, now);
        jobs.syncHold(a);
        pool.roundDue = true;
        JobRow row = a.row;
        return pool.writes.commitOfThisIteration().thenApply(v -> row);
    }
}
