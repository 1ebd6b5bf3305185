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
    private long nextSeq;
    private long nextEventId;

    JobLifecycle(PoolState pool, Map<String, String> idempotency, long nextSeq, long nextEventId) {
        this.pool = pool;
        this.idempotency = idempotency;
        this.nextSeq = nextSeq;
        this.nextEventId = nextEventId;
    }

    /** Queues a job for its tenant; completes once it is durable. Idempotent per (tenant, key). */
    CompletableFuture<Views.Submitted> submit(JobRequest asked, String idempotencyKey) {
        JobRequest request = asked;
        pool.writes.requireStore();
        String tenant = request.tenant();
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
        request = TenantTimeLimits.apply(request, pool.tenants.get(tenant));
        long now = pool.clock.now();
        long seq = nextSeq++;
        String id = "j" + seq;
        JobSpec spec = request.toJobSpec(id, now);
        SubmitResult r = pool.engine.submit(spec, now);
        if (!r.accepted()) {
            pool.engine.forget(id);
            pool.listener.rejected(tenant);
            throw NeverRuns.error(r.status(), request);
        }
        JobRow row = new JobRow(seq, id, tenant, idempotencyKey, request.toJson(), "PENDING", now, null, null, 0, null, null);
        ActiveJob a = new ActiveJob(row, request, pool.writes.commitOfThisIteration());
        pool.active.put(id, a);
        if (idempotencyKey != null) idempotency.put(tenant + "\n" + idempotencyKey, id);
        pool.writes.add(new Write.InsertJob(row));
        event(a, "SUBMITTED", null, now);
        pool.listener.submitted(tenant);
        pool.roundDue = true;
        return a.inserted.thenApply(v -> new Views.Submitted(id, row, true));
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
        for (String node : a.nodes) {
            pool.writes.add(new Write.InsertAttempt(new AttemptRow(id, a.row.attempt(), node, Grants.attemptJson(grants, node), now,
                    "ASSIGNED", null, null, null, null, null)));
            pool.agents.touch(node);
        }
        event(a, "STARTED", "attempt " + a.row.attempt() + ": " + Grants.describe(grants), now);
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
        a.row = a.row.withState(state, a.row.startedMs(), now, a.row.preemptions(), exitCode, message);
        pool.writes.add(new Write.UpdateJob(a.row));
        if (held) {
            pool.writes.add(new Write.SetAllocation(a.id(), List.of()));
            releaseAttempt(a, state.toLowerCase(Locale.ROOT) + (message == null ? "" : ": " + message));
        }
        event(a, state, message, now);
        pool.active.remove(a.id());
        pool.stopping.forget(a.id());
        pool.engine.forget(a.id());
        pool.listener.finished(a.tenant(), state);
        pool.roundDue = true;
        JobRow row = a.row;
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
        releaseAttempt(a, "failed after a restart");
        event(a, "FAILED", a.row.message(), now);
        pool.active.remove(row.id());
    }

    /**
     * A running job went back to the queue (preempted by the policy, drained, lost, or not restorable). It is held
     * until every node of the attempt it leaves has confirmed the attempt gone ({@link StoppingAttempts}).
     */
    void requeued(ActiveJob a, String type, String why, long now) {
        a.row = a.row.withState("PENDING", a.row.startedMs(), null, a.row.preemptions() + 1, null, why);
        pool.writes.add(new Write.UpdateJob(a.row));
        pool.writes.add(new Write.SetAllocation(a.id(), List.of()));
        releaseAttempt(a, type.toLowerCase(Locale.ROOT) + ": " + why);
        for (String node : a.nodes) {
            AgentNodes.Node n = pool.agents.get(node);
            // a static node runs nothing; an agent that reported this attempt's end has no process of it left
            if (n != null && !a.endedOn.contains(node)) pool.stopping.add(a.id(), a.row.attempt(), node, n.version);
        }
        if (pool.stopping.waiting(a.id())) pool.engine.hold(a.id(), pool.stopping.reason(a.id()));
        else pool.engine.releaseHold(a.id()); // nothing can still run (the engine holds what a round preempts)
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
            if (a != null && a.row.state().equals("PENDING") && pool.engine.releaseHold(id)) pool.roundDue = true;
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
