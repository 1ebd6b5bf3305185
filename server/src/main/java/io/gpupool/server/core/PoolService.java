package io.gpupool.server.core;

import io.gpupool.agent.protocol.AccountIsolation;
import io.gpupool.agent.protocol.DesiredState;
import io.gpupool.agent.protocol.NodeConfinement;
import io.gpupool.agent.protocol.NodeReport;
import io.gpupool.engine.JobState;
import io.gpupool.engine.policy.RuntimePredictor;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.NodeSpec;
import io.gpupool.server.auth.Principal;
import io.gpupool.store.GroupCommitWriter;
import io.gpupool.store.JobRow;
import io.gpupool.store.RecoveredState;
import io.gpupool.store.TenantRow;
import io.gpupool.store.TokenRow;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * The service around the engine, as the API, the demo and the runtime learner see it: every command runs on the
 * engine loop ({@link EngineLoop}), which owns the pool, and completes once what it decided is durable. The work is
 * done by one class per concern: {@link JobLifecycle} (job writes), {@link AgentProtocol} and {@link NodeLiveness}
 * (the agent protocol), {@link PoolAdmin} (nodes, tenants, settings) and {@link PoolRecovery} (the start from the
 * store).
 */
public final class PoolService implements AutoCloseable {
    private final PoolState pool;
    private final JobLifecycle jobs;
    private final AgentProtocol agents;
    private final PoolAdmin admin;
    private final JobEdits edits;
    private final ReservationAdmin reservations;
    private final EngineLoop loop;

    /**
     * Rebuilds the pool from what the store recovered, adds the static nodes not yet known, and starts the
     * engine loop.
     *
     * @param staticNodes nodes declared on the command line (or by the demo), with their source label
     */
    public PoolService(RecoveredState recovered, Map<NodeSpec, String> staticNodes, SchedulerSettings defaults,
                       AgentSettings agentSettings, GroupCommitWriter writer, GpuCatalog catalog, GpuTelemetry telemetry,
                       ServiceClock clock, LoopListener listener, Consumer<List<Change>> publisher) {
        PendingWrites writes = new PendingWrites(writer, publisher);
        PoolRecovery recovery = new PoolRecovery(recovered, catalog, clock);
        this.pool = recovery.pool(staticNodes, defaults, writes, listener);
        String epoch = recovery.epoch(writes);
        this.jobs = new JobLifecycle(pool, new HashMap<>(recovered.idempotency()), recovered.nextSeq(), recovered.nextEventId(),
                recovered.arraysWithFailures());
        this.agents = new AgentProtocol(pool, jobs, new NodeLiveness(pool, jobs, agentSettings), agentSettings, telemetry, epoch);
        this.admin = new PoolAdmin(pool, jobs);
        pool.usage.restore(recovered.openUsage(), clock.now());
        this.edits = new JobEdits(pool, jobs);
        this.reservations = new ReservationAdmin(pool);
        reservations.restore(recovered.reservations(), clock.now());   // before the jobs: a job may run in one
        recovery.restore(pool, jobs);
        pool.usage.closeAllBut(pool.active.values().stream().filter(a -> a.row.state().equals("RUNNING")).map(ActiveJob::id)
                .collect(Collectors.toSet()), clock.now());
        this.loop = new EngineLoop(pool, jobs, agents, reservations, telemetry);
    }

    // ---- jobs -----------------------------------------------------------------------------------

    /** Queues a job for its tenant; completes once it is durable. Idempotent per (tenant, key). */
    public CompletableFuture<Views.Submitted> submit(JobRequest request, String idempotencyKey) {
        return submit(request, null, Map.of(), idempotencyKey);
    }

    /**
     * Queues a job that waits for others ({@code dependency}, null = none); {@code known} is how the store saw each job
     * or array it names, read just before.
     */
    public CompletableFuture<Views.Submitted> submit(JobRequest request, Dependency dependency, Map<String, Dependency.Target> known,
                                                    String idempotencyKey) {
        return loop.call(() -> jobs.submit(request, dependency, known, idempotencyKey));
    }

    /** Holds a queued job the caller may see; completes with its row, or null when it is not active (or not visible). */
    public CompletableFuture<JobRow> hold(String jobId, Principal by) {
        return loop.call(() -> edits.hold(jobId, by));
    }

    /** Releases a job held with {@link #hold}; null as there. */
    public CompletableFuture<JobRow> release(String jobId, Principal by) {
        return loop.call(() -> edits.release(jobId, by));
    }

    /** Holds, releases or edits every queued task of an array; completes with how many, or -1 when it has none the caller may see. */
    public CompletableFuture<Integer> editArray(String arrayId, JobEdits.ArrayEdit edit, JobEdits.Update update, Principal by) {
        return loop.call(() -> edits.onArray(arrayId, edit, update, by));
    }

    /** Sends a running job back to the queue (it runs again as a new attempt); null as there. */
    public CompletableFuture<JobRow> requeue(String jobId, Principal by) {
        return loop.call(() -> edits.requeue(jobId, by));
    }

    /** Edits a queued job (priority, GPU models, dependency); null as there. */
    public CompletableFuture<JobRow> update(String jobId, JobEdits.Update update, Principal by) {
        return loop.call(() -> edits.update(jobId, update, by));
    }

    /** Queues every task of a job array; completes once they are durable, with the first task. */
    public CompletableFuture<Views.Submitted> submitArray(JobRequest request, ArraySpec array, Dependency dependency,
                                                         Map<String, Dependency.Target> known, String idempotencyKey) {
        return loop.call(() -> jobs.submitArray(request, array, dependency, known, idempotencyKey));
    }

    /** Cancels every active task of an array; completes with how many, or -1 when it has none the caller may see. */
    public CompletableFuture<Integer> cancelArray(String arrayId, Principal by) {
        return loop.call(() -> jobs.cancelArray(arrayId, by));
    }

    /**
     * Cancels a pending or running job the caller may see. Completes with the final row, or with null when
     * the job is not active (the caller then tells "not found" from "already ended" by reading the store).
     */
    public CompletableFuture<JobRow> cancel(String jobId, Principal by) {
        return loop.call(() -> jobs.cancel(jobId, by));
    }

    // ---- nodes, tenants, settings -----------------------------------------------------------------

    /** Cordon (no new work) or uncordon a node. */
    public CompletableFuture<Void> setCordoned(String node, boolean cordoned) {
        return loop.call(() -> admin.setCordoned(node, cordoned));
    }

    /** Cordons the node and sends its running jobs back to the queue (they restart elsewhere). */
    public CompletableFuture<List<String>> drain(String node) {
        return loop.call(() -> admin.drain(node));
    }

    /** Creates ({@code create}) or updates a tenant's weight, guarantee and limit; its jobs only on own-account nodes. */
    public CompletableFuture<TenantRow> putTenant(String name, double weight, double guaranteed, double limit, boolean create) {
        return putTenant(name, weight, guaranteed, limit, false, 0, 0, create);
    }

    /**
     * Creates ({@code create}) or updates a tenant: weight, guarantee, limit, and whether its jobs may run on nodes that
     * run every job as the agent's own account ({@code sharedAccountNodes}), and its jobs' default and maximum time limits
     * (seconds, 0 = none).
     */
    public CompletableFuture<TenantRow> putTenant(String name, double weight, double guaranteed, double limit, boolean sharedAccountNodes,
                                                  long defaultTimeLimitSec, long maxTimeLimitSec, boolean create) {
        return loop.call(() -> admin.putTenant(name, weight, guaranteed, limit, sharedAccountNodes, defaultTimeLimitSec, maxTimeLimitSec, create));
    }

    /** Applies new scheduler settings (validated by the caller) without a restart; running jobs keep their GPUs. */
    public CompletableFuture<SchedulerSettings> reconfigure(SchedulerSettings s) {
        return loop.call(() -> admin.reconfigure(s));
    }

    // ---- advance reservations ---------------------------------------------------------------------

    /** Reserves GPUs for a tenant over a window (admin); a {@link ServiceException} (422) names the field it cannot honour. */
    public CompletableFuture<Views.MadeReservation> reserve(io.gpupool.engine.reservation.ReservationRequest request, Principal by) {
        return loop.call(() -> reservations.create(request, by));
    }

    /** Deletes a reservation (admin); false when there is none of that name. */
    public CompletableFuture<Boolean> deleteReservation(String name) {
        return loop.call(() -> reservations.delete(name));
    }

    public CompletableFuture<List<Views.Reservation>> reservations() {
        return onLoop(reservations::list);
    }

    // ---- the agent protocol -----------------------------------------------------------------------

    /**
     * A node's agent registers (see {@link AgentProtocol#register}).
     *
     * @param credential      the node's new credential, minted by the caller, stored with the registration
     * @param firstPendingSeq the agent's oldest unacknowledged status seq (-1: not given)
     * @param confinement     what the node enforces on its jobs (shown by the node API; null from an older agent)
     * @param accounts        whether it runs jobs as their owners' Unix accounts, and accounts it lacks
     */
    public CompletableFuture<Views.Registered> registerAgent(NodeSpec spec, TokenRow credential, long firstPendingSeq, long killGraceMs,
                                                             NodeConfinement confinement, AccountIsolation accounts) {
        return loop.call(() -> agents.register(spec, credential, firstPendingSeq, killGraceMs, confinement, accounts));
    }

    /**
     * An agent's report (see {@link AgentProtocol#report}).
     *
     * @param stored for every output stream in the report, the length the store held before this call
     */
    public CompletableFuture<Views.Reported> report(String node, NodeReport r, Map<OutputLedger.Key, Long> stored) {
        return loop.call(() -> agents.report(node, r, stored));
    }

    /** The node's desired state if its version is above {@code applied}, else null (after a waiting report woke). */
    public CompletableFuture<DesiredState> desired(String node, long applied) {
        return loop.call(() -> agents.desired(node, applied));
    }

    // ---- queries ----------------------------------------------------------------------------------

    public PoolSnapshot snapshot() { return loop.snapshot(); }

    public PoolHistory history() { return loop.history(); }

    public CompletableFuture<SchedulerSettings> settings() {
        return onLoop(() -> pool.settings);
    }

    /** The nodes the engine places on, in its order, as registered (the pool a replay of the history runs on). */
    public CompletableFuture<List<io.gpupool.model.NodeSpec>> nodeSpecs() {
        return onLoop(() -> pool.engine.cluster().nodes().stream().map(io.gpupool.engine.state.NodeState::spec).toList());
    }

    public CompletableFuture<List<TenantRow>> tenants() {
        return onLoop(() -> List.copyOf(pool.tenants.values()));
    }

    public CompletableFuture<Boolean> tenantExists(String name) {
        return onLoop(() -> pool.tenants.containsKey(name));
    }

    /** What the engine knows of an active job (state, reason for waiting, grants); null when not active. */
    public CompletableFuture<Views.Live> live(String jobId) {
        return onLoop(() -> {
            ActiveJob a = pool.active.get(jobId);
            if (a == null) return null;
            JobState j = pool.engine.job(jobId);
            return new Views.Live(a.row.state(), j.waitReason(), j.waitStatus(), pool.grants(j.allocation()));
        });
    }

    /** Checks the engine's bookkeeping against the sharing rules (tests and the crash check call it). */
    public CompletableFuture<Void> checkConsistency() {
        return onLoop(() -> {
            pool.engine.checkConsistency();
            return null;
        });
    }

    public boolean alive() {
        return loop.alive();
    }

    /** Installs the run-time predictor that qssf and EASY backfill consult (from the next round on). */
    public CompletableFuture<Void> usePredictor(RuntimePredictor predictor) {
        return onLoop(() -> {
            pool.engine.setPredictor(predictor);
            pool.roundDue = true;
            return null;
        });
    }

    /** Runs {@code task} on the loop thread, which owns the engine and its predictor (e.g. to save the predictor). */
    public <T> CompletableFuture<T> onLoop(Supplier<T> task) {
        return loop.call(() -> CompletableFuture.completedFuture(task.get()));
    }

    /** Stops the loop after the commands already queued, and commits what they decided. */
    @Override
    public void close() {
        loop.close();
    }
}
