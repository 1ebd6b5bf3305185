package io.gpupool.server.core;

import io.gpupool.agent.protocol.AccountIsolation;
import io.gpupool.agent.protocol.DesiredState;
import io.gpupool.agent.protocol.GpuSample;
import io.gpupool.agent.protocol.Grant;
import io.gpupool.agent.protocol.GrantedGpu;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.protocol.JobPhase;
import io.gpupool.agent.protocol.JobStatusReport;
import io.gpupool.agent.protocol.LogChunk;
import io.gpupool.agent.protocol.LogOffset;
import io.gpupool.agent.protocol.NodeConfinement;
import io.gpupool.agent.protocol.NodeReport;
import io.gpupool.engine.JobState;
import io.gpupool.model.HostResources;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;
import io.gpupool.store.AttemptUpdate;
import io.gpupool.store.NodeRow;
import io.gpupool.store.TenantRow;
import io.gpupool.store.TokenRow;
import io.gpupool.store.Write;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The server side of the agent protocol (docs/architecture.md): nodes register, their agents report job statuses,
 * output and telemetry and get the node's desired state back. A status report changes the job of the attempt it is
 * about; output is appended by offset ({@link OutputLedger}). Loop thread only.
 */
final class AgentProtocol {
    private static final Logger LOG = LoggerFactory.getLogger(AgentProtocol.class);
    /** {@code nodes.source} of a node its agent registered. */
    static final String AGENT_SOURCE = "agent";

    private final PoolState pool;
    private final JobLifecycle jobs;
    private final NodeLiveness liveness;
    private final AgentSettings settings;
    private final GpuTelemetry telemetry;
    private final String epoch;
    private final OutputLedger output = new OutputLedger();
    /** Whether the engine has the {@link AccountFilter} (from the first node that needs it on). */
    private boolean accountFilterAdded;

    AgentProtocol(PoolState pool, JobLifecycle jobs, NodeLiveness liveness, AgentSettings settings, GpuTelemetry telemetry, String epoch) {
        this.pool = pool;
        this.jobs = jobs;
        this.liveness = liveness;
        this.settings = settings;
        this.telemetry = telemetry;
        this.epoch = epoch;
    }

    /**
     * A node's agent registers: a new node joins the pool (its GPUs as the agent discovered them); a known one
     * must have the same GPUs. The node gets a new credential (the old one is revoked), its status seq restarts
     * where the agent's unacknowledged reports start, and its agent gets the full desired state next.
     *
     * @param credential      the node's new credential, minted by the caller, stored with the registration
     * @param firstPendingSeq the agent's oldest unacknowledged status seq (-1: not given)
     * @param confinement     what the node enforces on its jobs (shown by the node API; null from an older agent)
     * @param accounts        whether it runs jobs as their owners' Unix accounts, and accounts it lacks
     */
    CompletableFuture<Views.Registered> register(NodeSpec spec, TokenRow credential, long firstPendingSeq, long killGraceMs,
                                                 NodeConfinement confinement, AccountIsolation accounts) {
        long now = pool.clock.now();
        String name = spec.name();
        NodeRow known = pool.nodes.get(name);
        String json = NodeCodec.toJson(spec);
        if (known != null && !known.source().equals(AGENT_SOURCE)) {
            throw ServiceException.conflict("node_name", "node " + name + " is declared by the server (" + known.source()
                    + "), not by an agent; give this agent another --node-name");
        }
        if (known != null && !known.spec().equals(json)) {
            throw ServiceException.conflict("inventory", "node " + name + " is registered with other GPUs (or another machine uses "
                    + "this name); give this agent another --node-name, or keep the GPUs it was registered with");
        }
        AgentNodes.Node a;
        if (known == null) {
            try {
                pool.engine.addNode(spec);
            } catch (SpecException e) {
                throw ServiceException.invalid(e.field(), e.getMessage());
            }
            NodeRow row = new NodeRow(name, json, AGENT_SOURCE, false, now);
            pool.nodes.put(name, row);
            pool.writes.add(new Write.PutNode(row));
            a = pool.agents.add(name, 0, -1, 0, pool.clock.nanos());
            LOG.info("node {} joined with {} GPUs", name, spec.gpus().size());
        } else {
            a = pool.agents.get(name);
        }
        if (firstPendingSeq >= 0) a.ackedSeq = firstPendingSeq - 1;
        a.confinement = confinement;
        String revoked = a.credentialId;
        if (revoked != null) pool.writes.add(new Write.DeleteToken(revoked));
        pool.writes.add(new Write.PutToken(credential));
        a.credentialId = credential.id();
        liveness.seen(a, killGraceMs);
        noteAccounts(a, accounts);
        pool.agents.touch(name); // the agent has no desired state in memory after its own restart: send it all
        pool.roundDue = true;
        Views.Registered r = new Views.Registered(name, epoch, settings.reportIntervalMs(), settings.nodeLostTimeoutMs(), revoked, a.leaseEpoch);
        return pool.writes.commitOfThisIteration().thenApply(v -> r);
    }

    /**
     * An agent's report: telemetry, job status reports (each seq applied once), output chunks (appended by
     * offset). Answers, once all of it is committed, with the highest seq applied, what output is held and
     * the node's desired state if it is newer than what the agent applied.
     *
     * @param stored for every output stream in the report, the length the store held before this call
     */
    CompletableFuture<Views.Reported> report(String node, NodeReport r, Map<OutputLedger.Key, Long> stored) {
        AgentNodes.Node a = pool.requireAgentNode(node);
        int gpuCount = pool.engine.cluster().node(pool.engine.cluster().nodeId(node)).gpuCount();
        for (int i = 0; i < r.gpus().size(); i++) {
            int index = r.gpus().get(i).index();
            if (index < 0 || index >= gpuCount) throw ServiceException.invalid("gpus[" + i + "].index", "node " + node + " has GPUs 0.." + (gpuCount - 1) + ", got " + index);
        }
        if (r.leaseEpoch() < a.leaseEpoch) {
            // sent before its agent heard that the node was declared lost: applied, it could revive what the server
            // gave up. Nothing in it counts, not even as a sign of life; the agent reports again under the new epoch.
            DesiredState desired = a.version > r.appliedDesiredVersion() ? desiredState(a) : null;
            Views.Reported stale = new Views.Reported(a.ackedSeq, desired, List.of(), a.nextChange, a.leaseEpoch);
            return pool.writes.commitOfThisIteration().thenApply(v -> stale);
        }
        if (r.leaseEpoch() > a.leaseEpoch) {
            // the agent holds an epoch this store never reached (it was replaced or restored): go on from there
            a.leaseEpoch = r.leaseEpoch();
            a.progressDirty = true;
        }
        long now = pool.clock.now();
        liveness.seen(a, r.killGraceMs());
        if (r.accounts() != null) noteAccounts(a, r.accounts());
        for (GpuSample g : r.gpus()) {
            long total = g.memoryTotalMib() == null ? 0 : g.memoryTotalMib();
            long used = g.memoryUsedMib() == null ? 0 : g.memoryUsedMib();
            GpuTelemetry.Sample sample = new GpuTelemetry.Sample(g.utilizationPercent() == null ? 0 : g.utilizationPercent(),
                    used, Math.max(0, total - used), g.powerWatts() == null ? 0 : g.powerWatts(),
                    g.temperatureC() == null ? 0 : g.temperatureC(), now);
            telemetry.put(node, g.index(), sample);
            pool.usage.sampled(node, g.index(), sample, now);
        }
        for (JobStatusReport st : r.statuses()) {
            if (st.seq() <= a.ackedSeq) continue; // applied before: its answer was lost
            applyStatus(node, st, now);
            a.ackedSeq = st.seq();
            a.progressDirty = true;
        }
        List<LogOffset> acks = new ArrayList<>();
        for (LogChunk c : r.logs()) {
            OutputLedger.Appended out = output.append(node, c, stored.getOrDefault(OutputLedger.key(c, node), 0L), now);
            if (out.write() != null) pool.writes.add(new Write.AppendOutput(out.write()));
            acks.add(out.ack());
        }
        jobs.releaseHolds(pool.stopping.reported(node, r.appliedDesiredVersion(), r.running()));
        if (r.appliedDesiredVersion() > a.version) {
            // the agent applied a version this store never reached (its store was replaced or restored): go beyond it
            a.version = r.appliedDesiredVersion();
            pool.agents.touch(node);
        }
        DesiredState desired = a.version > r.appliedDesiredVersion() ? desiredState(a) : null;
        Views.Reported answer = new Views.Reported(a.ackedSeq, desired, acks, a.nextChange, a.leaseEpoch);
        return pool.writes.commitOfThisIteration().thenApply(v -> answer);
    }

    /** The node's desired state if its version is above {@code applied}, else null (after a waiting report woke). */
    CompletableFuture<DesiredState> desired(String node, long applied) {
        AgentNodes.Node a = pool.requireAgentNode(node);
        liveness.seen(a, a.killGraceMs);
        DesiredState d = a.version > applied ? desiredState(a) : null;
        return pool.writes.commitOfThisIteration().thenApply(v -> d);
    }

    /** The periodic check: lost nodes, and output bookkeeping of attempts long complete. */
    void check(long now) {
        liveness.check(now);
        output.forgetOld(now);
    }

    /**
     * What a node's agent says of Unix accounts. The first node that runs jobs under its agent's account, or lacks one,
     * adds the {@link AccountFilter} to the engine; a change lets waiting jobs be tried again.
     */
    private void noteAccounts(AgentNodes.Node a, AccountIsolation accounts) {
        if (accounts.equals(a.accounts)) return;
        if (!accountFilterAdded && (!accounts.switches() || !accounts.missing().isEmpty())) {
            pool.engine.addFilter(new AccountFilter(node -> {
                AgentNodes.Node n = pool.agents.get(node);
                return n == null ? null : n.accounts;
            }, job -> {
                ActiveJob j = pool.active.get(job);
                return j == null ? null : j.request.runAs();
            }, tenant -> {
                TenantRow t = pool.tenants.get(tenant);
                return t != null && t.sharedAccountNodes();
            }));
            accountFilterAdded = true;
        }
        if (!accounts.switches() && (a.accounts == null || a.accounts.switches())) LOG.warn("node {} runs every job as its agent's account: {}", a.name, accounts.reason());
        a.accounts = accounts;
        pool.roundDue = true;
    }

    /**
     * One status report of an agent. Only a report about a job's current attempt on that node changes the
     * job; any other (an attempt the server already ended, e.g. after declaring the node lost) is recorded on
     * its attempt row and changes nothing else. A report that names another submit instant than the job of its id has
     * is about an earlier job of that id (before the store was restored from a backup): it changes nothing at all.
     */
    private void applyStatus(String node, JobStatusReport st, long now) {
        String phase = st.phase().name();
        ActiveJob a = pool.active.get(st.jobId());
        if (a != null && st.submittedMs() != null && st.submittedMs() != a.row.submittedMs()) {
            // an attempt of an earlier job with this id, which a store restored from a backup gave out again: not this job's
            LOG.info("node {}: a report about {} attempt {} of a job submitted at {}, not the job of that id now (submitted at {}): ignored",
                    node, st.jobId(), st.attempt(), st.submittedMs(), a.row.submittedMs());
            return;
        }
        // an ended job's attempt row changes only if it is the job the report names (the store checks the submit instant)
        pool.writes.add(new Write.UpdateAttempt(new AttemptUpdate(st.jobId(), st.attempt(), node, phase, st.pid(), st.startedAtMs(),
                st.endedAtMs(), st.exitCode(), st.message(), st.submittedMs())));
        if (st.phase().terminal()) jobs.releaseHolds(pool.stopping.ended(node, st.jobId(), st.attempt()));
        if (a == null || a.row.attempt() != st.attempt() || !a.nodes.contains(node)) return;
        if (st.phase().terminal()) a.endedOn.add(node);
        String where = "node " + node + ": " + (st.message() == null ? phase.toLowerCase(Locale.ROOT) : st.message());
        if (!a.row.state().equals("RUNNING")) {
            // the attempt was requeued when its node was declared lost, but it had finished: its result stands
            if (st.phase() == JobPhase.SUCCEEDED && a.row.state().equals("PENDING") && a.nodes.equals(Set.of(node))) {
                pool.engine.cancel(a.id(), now);
                jobs.end(a, "SUCCEEDED", st.exitCode(), "attempt " + st.attempt() + " finished on node " + node + " while the node was out of reach", now);
            }
            return;
        }
        switch (st.phase()) {
            case RUNNING -> {
                if (a.confirmed.add(node)) jobs.event(a, "RUNNING", "attempt " + st.attempt() + " on node " + node + ", pid " + st.pid(), now);
                else if (st.message() != null && st.message().startsWith("warning")) jobs.event(a, "WARNING", where, now);
            }
            case SUCCEEDED -> {
                a.succeeded.add(node);
                if (a.succeeded.containsAll(a.nodes)) {
                    pool.engine.complete(a.id(), now);
                    jobs.end(a, "SUCCEEDED", st.exitCode(), null, now);
                }
            }
            case FAILED -> {
                if (lacksAccount(node, a)) {
                    // the node's fault, not the job's: it runs again elsewhere (the account filter keeps it off this node)
                    jobs.lostAttempt(a, where, now);
                } else {
                    pool.engine.complete(a.id(), now);
                    jobs.end(a, "FAILED", st.exitCode(), where, now);
                }
            }
            case TIMEOUT -> jobs.timedOut(a, st.exitCode(), where, now);
            // the server did not ask for this end (it would have released the attempt first): the run is lost
            case STOPPED, LOST -> jobs.lostAttempt(a, where, now);
        }
    }

    /** Whether the node's agent says it lacks the job's Unix account (an attempt there could not start). */
    private boolean lacksAccount(String node, ActiveJob a) {
        AgentNodes.Node n = pool.agents.get(node);
        return a.request.runAs() != null && n != null && n.accounts != null && n.accounts.missing().contains(a.request.runAs());
    }

    /** Every attempt placed on the node, with the node's grants in CUDA order. */
    private DesiredState desiredState(AgentNodes.Node n) {
        int nodeId = pool.engine.cluster().nodeId(n.name);
        List<JobLaunch> launches = new ArrayList<>();
        for (JobState j : pool.engine.runningJobs()) {
            List<GrantedGpu> mine = new ArrayList<>();
            for (Grant g : Grants.onNode(j.allocation(), pool.engine.cluster(), nodeId)) mine.add(GrantedGpu.of(g));
            if (mine.isEmpty()) continue;
            ActiveJob a = pool.active.get(j.id());
            // the replica's host CPU and RAM become its cgroup's limits on the node (none asked: no limit)
            launches.add(new JobLaunch(j.id(), a.row.attempt(), a.request.command(), ArrayTask.launchEnv(a.array, a.request.env()), a.request.workDir(), mine,
                    new HostResources(a.request.cpuMilli(), a.request.hostMemMib()), a.request.runAs(),
                    a.request.timeLimitSec() > 0 ? a.request.timeLimitSec() * 1000 : null, a.row.submittedMs()));
        }
        launches.sort(Comparator.comparing(JobLaunch::jobId));
        return new DesiredState(n.version, launches);
    }
}
