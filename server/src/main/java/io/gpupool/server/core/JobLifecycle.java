package io.gpupool.server.core;

import io.gpupool.agent.protocol.Grant;
import io.gpupool.engine.JobState;
import io.gpupool.engine.SubmitResult;
import io.gpupool.model.JobSpec;
import io.gpupool.server.auth.Principal;
import io.gpupool.store.AttemptRow;
import io.gpupool.store.AttemptUpdate;
import io.gpupool.store.EventRow;
import io.gpupool.store.GrantRow;
import io.gpupool.store.JobRow;
import io.gpupool.store.Write;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The jobs' side of the engine loop: every change of a job's state (submitted, started, requeued, ended), each with its
 * store writes and its event. A requeued job starts no new attempt until its last one is known to be gone
 * ({@link StoppingAttempts}): a job never runs twice at once. Loop thread only.
 */
final class JobLifecycle {
    private final PoolState pool;
    /** (tenant, idempotency key) to job id. */
    private final Map<String, String> idempotency;
    private final DependencyBook deps;
    private long nextSeq;
    private long nextEventId;

    JobLifecycle(PoolState pool, Map<String, String> idempotency, long nextSeq, long nextEventId, java.util.Set<String> arraysWithFailures) {
        this.pool = pool;
        this.deps = new DependencyBook(pool, arraysWithFailures);
        this.idempotency = idempotency;
        this.nextSeq = nextSeq;
        this.nextEventId = nextEventId;
    }

    /** Queues a job for its tenant; completes once it is durable. Idempotent per (tenant, key). */
    CompletableFuture<Views.Submitted> submit(JobRequest request, Dependency dependency, Map<String, Dependency.Target> known,
                                              String idempotencyKey) {
        CompletableFuture<Views.Submitted> retry = retried(request.tenant(), idempotencyKey);
        if (retry != null) return retry;
        request = TenantTimeLimits.apply(request, pool.tenants.get(request.tenant()));
        DependencyBook.check(pool, dependency, known);
        long now = pool.clock.now();
        long seq = nextSeq++;
        ActiveJob a = queue(seq, "j" + seq, request, null, dependency, known, idempotencyKey, now);
        pool.roundDue = true;
        JobRow row = a.row;   // as submitted: a round may start it before the commit completes
        return a.inserted.thenApply(v -> new Views.Submitted(row.id(), row, true));
    }

    /**
     * Queues every task of a job array (one job each, all written in this iteration's one transaction); completes once
     * they are durable, with the first task. The array's id is "j" and the first task's sequence number; the
     * idempotency key goes with the first task. The tasks differ only in their environment, so the engine accepts all
     * or none.
     */
    CompletableFuture<Views.Submitted> submitArray(JobRequest request, ArraySpec array, Dependency dependency,
                                                   Map<String, Dependency.Target> known, String idempotencyKey) {
        CompletableFuture<Views.Submitted> retry = retried(request.tenant(), idempotencyKey);
        if (retry != null) return retry;
        request = TenantTimeLimits.apply(request, pool.tenants.get(request.tenant()));
        DependencyBook.check(pool, dependency, known);
        long now = pool.clock.now();
        String arrayId = "j" + nextSeq;
        ActiveJob first = null;
        for (int index : array.indices()) {
            ArrayTask task = new ArrayTask(arrayId, index, array.cap());
            long seq = nextSeq++;
            ActiveJob a = queue(seq, task.jobId(), request, task, dependency, known, first == null ? idempotencyKey : null, now);
            if (first == null) first = a;
        }
        pool.roundDue = true;
        JobRow head = first.row;   // as submitted
        return pool.writes.commitOfThisIteration().thenApply(v -> new Views.Submitted(head.id(), head, true));
    }

    /** The job an idempotent retry names (once it is durable), or null when the key is new; checks the tenant. */
    private CompletableFuture<Views.Submitted> retried(String tenant, String idempotencyKey) {
        pool.writes.requireStore();
        if (idempotencyKey != null) {
            String existing = idempotency.get(tenant + "\n" + idempotencyKey);
            if (existing != null) {
                ActiveJob a = pool.active.get(existing);
                CompletableFuture<Void> durable = a != null ? a.inserted : CompletableFuture.completedFuture(null);
                return durable.thenApply(v -> new Views.Submitted(existing, null, false));
            }
        }
        if (!pool.tenants.containsKey(tenant)) {
            throw ServiceException.invalid("tenant", "unknown tenant '" + tenant + "'; an admin creates it with POST /api/v1/tenants");
        }
        return null;
    }

    /** Hands one job to the engine and queues its row and event; refused (nothing kept) when it could never run. */
    private ActiveJob queue(long seq, String id, JobRequest request, ArrayTask task, Dependency dependency,
                            Map<String, Dependency.Target> known, String idempotencyKey, long now) {
        String tenant = request.tenant();
        JobSpec spec = request.toJobSpec(id, now);
        if (request.reservation() != null) {
            io.gpupool.engine.status.Status misfit = pool.engine.reservationMisfit(spec, request.reservation());
            if (misfit != null) throw ServiceException.invalid("reservation", misfit.message());
        }
        SubmitResult r = pool.engine.submit(spec, now);
        if (!r.accepted()) {
            pool.engine.forget(id);
            pool.listener.rejected(tenant);
            throw NeverRuns.error(r.status(), request);
        }
        if (request.reservation() != null) pool.engine.useReservation(id, request.reservation());
        JobRow row = new JobRow(seq, id, tenant, idempotencyKey, "", "PENDING", now, null, null, 0, null, null);
        ActiveJob a = new ActiveJob(row, request, task, pool.writes.commitOfThisIteration());
        track(a);
        a.dependency = dependency;
        DependencyBook.Change standing = dependency != null ? deps.waitFor(a, known) : null;
        a.row = row.withSpec(a.spec().toJson());
        capArrayTask(a);
        if (idempotencyKey != null) idempotency.put(tenant + "\n" + idempotencyKey, id);
        pool.writes.add(new Write.InsertJob(a.row));
        event(a, "SUBMITTED", task == null ? null : "task " + task.index() + " of array " + task.arrayId(), now);
        pool.listener.submitted(tenant);
        if (standing != null && (standing.never() != null || !a.dependency.equals(dependency))) applyDependencyChanges(List.of(standing), now);
        else if (standing != null) syncHold(a);
        return a;
    }

    DependencyBook dependencies() { return deps; }

    /** The job is active: the pool and the dependency book know it. */
    void track(ActiveJob a) {
        pool.activate(a);
        deps.activated(a);
    }

    /** After a restart, with every active job tracked: what each queued job still waits for, and its hold. */
    void restoreWorkflows(long now) {
        List<DependencyBook.Change> changes = new ArrayList<>();
        for (ActiveJob a : List.copyOf(pool.active.values())) {
            if (a.dependency != null && a.row.state().equals("PENDING")) changes.add(deps.waitFor(a, Map.of()));
        }
        applyDependencyChanges(changes, now);
        for (ActiveJob a : pool.active.values()) syncHold(a);
    }

    /**
     * Waiting jobs whose conditions changed: one that can never be met fails the job (or, with kill-on-invalid-dep
     * off, keeps it held with the reason); the rest is written to its spec, and a job waiting for nothing more may
     * start.
     */
    void applyDependencyChanges(List<DependencyBook.Change> changes, long now) {
        for (DependencyBook.Change c : changes) {
            ActiveJob w = c.job();
            if (pool.active.get(w.id()) != w) continue;   // ended meanwhile (a cascade)
            if (c.never() != null && w.dependency.killOnInvalid()) {
                pool.engine.cancel(w.id(), now);
                end(w, "FAILED", null, "dependency " + c.never(), now);
                continue;
            }
            if (c.never() != null) w.dependencyNever = c.never();
            w.row = w.row.withSpec(w.spec().toJson());
            pool.writes.add(new Write.UpdateSpec(w.id(), w.row.spec()));
            event(w, "DEPENDENCY", c.never() != null ? c.never() + " (kept queued: kill-on-invalid-dep is off)"
                    : w.dependency.waits() ? "waits for " + w.dependency : "every dependency met", now);
            syncHold(w);
        }
    }

    /**
     * Holds a queued job in the engine for the first reason it has (its last attempt still stopping, a user's hold,
     * a dependency), or lets it be placed when it has none.
     */
    void syncHold(ActiveJob a) {
        if (!a.row.state().equals("PENDING")) return;
        String reason = pool.stopping.waiting(a.id()) ? pool.stopping.reason(a.id())
                : a.heldBy != null ? "on hold (" + a.heldBy + ")"
                : a.dependencyNever != null ? "dependency " + a.dependencyNever
                : DependencyBook.reason(a);
        if (reason != null) pool.engine.hold(a.id(), reason);
        else if (pool.engine.releaseHold(a.id())) pool.roundDue = true;
    }

    /** After a restart: a job that runs in a reservation keeps to it (it waits, saying so, if the reservation is gone). */
    void restoreReservation(ActiveJob a) {
        if (a.request.reservation() != null) pool.engine.useReservation(a.id(), a.request.reservation());
    }

    /** An array task with a cap counts against it in the engine. */
    void capArrayTask(ActiveJob a) {
        if (a.array != null && a.array.cap() > 0) pool.engine.capConcurrency(a.id(), a.array.arrayId(), a.array.cap());
    }

    /**
     * Cancels every active task of an array the caller may see; completes with how many it cancelled, or with -1
     * when the array has no active task (or the caller may not see it).
     */
    CompletableFuture<Integer> cancelArray(String arrayId, Principal by) {
        pool.writes.requireStore();
        java.util.Set<String> tasks = pool.arrays.get(arrayId);
        if (tasks == null || !by.sees(pool.active.get(tasks.iterator().next()).tenant())) return CompletableFuture.completedFuture(-1);
        int n = 0;
        for (String id : List.copyOf(tasks)) {
            cancel(id, by);
            n++;
        }
        int cancelled = n;
        return pool.writes.commitOfThisIteration().thenApply(v -> cancelled);
    }

    /**
     * Cancels a pending or running job the caller may see. Completes with the final row, or with null when
     * the job is not active (the caller then tells "not found" from "already ended" by reading the store).
     */
    CompletableFuture<JobRow> cancel(String jobId, Principal by) {
        pool.writes.requireStore();
        ActiveJob a = pool.active.get(jobId);
        if (a == null || !by.sees(a.tenant())) return CompletableFuture.completedFuture(null);
        long now = pool.clock.now();
        pool.engine.cancel(jobId, now);
        return end(a, "CANCELLED", null, "cancelled by " + by.role().wire() + " token " + by.tokenId(), now);
    }

    /** Its agent stopped the job at its time limit: it ends as TIMEOUT, whatever its other nodes still report. */
    void timedOut(ActiveJob a, Integer exitCode, String where, long now) {
        pool.engine.complete(a.id(), now);
        end(a, "TIMEOUT", exitCode, where, now);
    }

    /** A round started the job: a new attempt on its nodes, whose agents get it in their desired state. */
    void started(String id, long now) {
        ActiveJob a = pool.active.get(id);
        JobState j = pool.engine.job(id);
        a.row = a.row.withState("RUNNING", now, null, j.preemptions(), null, null).nextAttempt();
        List<Grant> grants = pool.grants(j.allocation());
        List<GrantRow> rows = Grants.rows(grants);
        pool.writes.add(new Write.UpdateJob(a.row));
        pool.writes.add(new Write.SetAllocation(id, rows));
        a.placedOn(Grants.nodes(rows));
        pool.usage.opened(id, a.row.attempt(), a.tenant(), a.request.user(), grants, now);
        for (String node : a.nodes) {
            pool.writes.add(new Write.InsertAttempt(new AttemptRow(id, a.row.attempt(), node, Grants.attemptJson(grants, node), now,
                    "ASSIGNED", null, null, null, null, null)));
            pool.agents.touch(node);
        }
        event(a, "STARTED", "attempt " + a.row.attempt() + ": " + Grants.describe(grants), now);
        applyDependencyChanges(deps.started(a), now);
    }

    /** A round preempted the job: back to the queue, with the policy's reason. */
    void preempted(String id, long now) {
        requeued(pool.active.get(id), "PREEMPTED", pool.engine.job(id).waitReason(), now);
    }

    /** Sends the jobs running on the node back to the queue; returns their ids. */
    List<String> drain(String node, long now) {
        int nodeId = pool.engine.cluster().nodeId(node);
        List<String> moved = new ArrayList<>();
        for (JobState j : List.copyOf(pool.engine.runningJobs())) {
            if (j.allocation().grants().stream().anyMatch(g -> g.node() == nodeId)) {
                pool.engine.preempt(j.id(), now);
                requeued(pool.active.get(j.id()), "PREEMPTED", "node " + node + " drained", now);
                moved.add(j.id());
            }
        }
        return moved;
    }

    CompletableFuture<JobRow> end(ActiveJob a, String state, Integer exitCode, String message, long now) {
        boolean held = a.row.state().equals("RUNNING");
        boolean wasPending = a.row.state().equals("PENDING");
        a.row = a.row.withState(state, a.row.startedMs(), now, a.row.preemptions(), exitCode, message);
        pool.writes.add(new Write.UpdateJob(a.row));
        if (held) {
            pool.writes.add(new Write.SetAllocation(a.id(), List.of()));
            pool.usage.closed(a.id(), now);
            releaseAttempt(a, state.toLowerCase(Locale.ROOT) + (message == null ? "" : ": " + message));
        }
        pool.usage.ended(a.id(), a.tenant(), a.request.user(), state, a.row.submittedMs(), now);
        event(a, state, message, now);
        pool.deactivate(a);
        pool.stopping.forget(a.id());
        pool.engine.forget(a.id());
        pool.listener.finished(a.tenant(), state);
        pool.roundDue = true;
        JobRow row = a.row;
        applyDependencyChanges(deps.ended(a, state, wasPending), now);
        return pool.writes.commitOfThisIteration().thenApply(v -> row);
    }

    /**
     * After a restart: a stored job the engine refuses now (the pool changed) fails, and what its attempt held is
     * released.
     */
    void failedAfterRestart(ActiveJob a, String reason, long now) {
        JobRow row = a.row;
        a.row = row.withState("FAILED", row.startedMs(), now, row.preemptions(), null, "after restart: " + reason);
        pool.writes.add(new Write.UpdateJob(a.row));
        pool.writes.add(new Write.SetAllocation(row.id(), List.of()));
        pool.usage.closed(row.id(), now);
        pool.usage.ended(row.id(), row.tenant(), a.request.user(), "FAILED", row.submittedMs(), now);
        releaseAttempt(a, "failed after a restart");
        event(a, "FAILED", a.row.message(), now);
        pool.deactivate(a);
        applyDependencyChanges(deps.ended(a, "FAILED", row.state().equals("PENDING")), now);
    }

    /**
     * A running job went back to the queue (preempted by the policy, drained, lost, or not restorable). It is held
     * until every node of the attempt it leaves has confirmed the attempt gone ({@link StoppingAttempts}).
     */
    void requeued(ActiveJob a, String type, String why, long now) {
        a.row = a.row.withState("PENDING", a.row.startedMs(), null, a.row.preemptions() + 1, null, why);
        pool.writes.add(new Write.UpdateJob(a.row));
        pool.writes.add(new Write.SetAllocation(a.id(), List.of()));
        pool.usage.closed(a.id(), now);
        releaseAttempt(a, type.toLowerCase(Locale.ROOT) + ": " + why);
        for (String node : a.nodes) {
            AgentNodes.Node n = pool.agents.get(node);
            // a static node runs nothing; an agent that reported this attempt's end has no process of it left
            if (n != null && !a.endedOn.contains(node)) pool.stopping.add(a.id(), a.row.attempt(), node, n.version);
        }
        deps.requeued(a);
        // held while an attempt may still run; else released (the engine holds what a round preempts) unless held otherwise
        syncHold(a);
        event(a, type, why, now);
    }

    /** A run lost to the infrastructure: the job runs again as a new attempt, or fails, by its restart policy. */
    void lostAttempt(ActiveJob a, String why, long now) {
        if (a.request.restartPolicy().equals(JobRequest.FAIL)) {
            pool.engine.complete(a.id(), now);
            end(a, "FAILED", null, why + " (restart policy fail)", now);
        } else {
            pool.engine.preempt(a.id(), now);
            requeued(a, "REQUEUED", why, now);
            pool.roundDue = true;
        }
    }

    /** Jobs whose last attempt every node has confirmed gone may start a new one. */
    void releaseHolds(List<String> jobs) {
        for (String id : jobs) {
            ActiveJob a = pool.active.get(id);
            if (a != null) syncHold(a);
        }
    }

    /**
     * The server no longer wants the current attempt (it ended, was cancelled, preempted, requeued): its nodes
     * get a new desired state without it, and its rows become STOPPING where the agent has not reported an end.
     */
    private void releaseAttempt(ActiveJob a, String why) {
        for (String node : a.nodes) {
            pool.writes.add(new Write.UpdateAttempt(new AttemptUpdate(a.id(), a.row.attempt(), node, "STOPPING", null, null, null, null,
                    "stop requested: " + why)));
            pool.agents.touch(node);
        }
    }

    void event(ActiveJob a, String type, String detail, long now) {
        pool.writes.add(new Write.InsertEvent(new EventRow(nextEventId++, a.id(), now, type, detail)));
        pool.writes.publish(new Change(type, a.id(), a.tenant(), a.row.state(), now, detail));
    }
}
