package io.gpupool.server;

import io.gpupool.agent.gpu.FakeGpuBackend;
import io.gpupool.agent.gpu.GpuDiscovery;
import io.gpupool.agent.link.HttpServerLink;
import io.gpupool.agent.link.LinkException;
import io.gpupool.agent.protocol.AccountIsolation;
import io.gpupool.agent.protocol.DesiredState;
import io.gpupool.agent.protocol.GpuSample;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.protocol.JobPhase;
import io.gpupool.agent.protocol.JobStatusReport;
import io.gpupool.agent.protocol.LogChunk;
import io.gpupool.agent.protocol.NodeInventory;
import io.gpupool.agent.protocol.NodeReport;
import io.gpupool.agent.protocol.RegisterRequest;
import io.gpupool.agent.protocol.Registration;
import io.gpupool.agent.protocol.ReportResponse;
import io.gpupool.agent.protocol.RunningJobInfo;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;

/**
 * One node speaking the agent protocol step by step through the agent's real HTTP link, without running
 * processes: for tests of the server side that need to say exactly what an agent says (a status twice, a
 * chunk beyond a gap, silence). Full agents are in {@link AgentEndToEndTest}.
 */
final class TestNode {
    final String name;
    final HttpServerLink link;
    final NodeInventory inventory;
    Registration registration;
    long applied = -1;
    long nextSeq;
    long leaseEpoch;
    /** The kill grace the node says its agent has. */
    long killGraceMs = 300;
    /** What the node says of Unix accounts: by default, as a root agent (jobs run as their own accounts, none missing). */
    AccountIsolation accounts = new AccountIsolation(true, null, List.of());
    /** What the node says it enforces on jobs (null: an older agent's registration, without it). */
    io.gpupool.agent.protocol.NodeConfinement confinement;
    /** What the node says runs on it. */
    List<RunningJobInfo> running = List.of();
    DesiredState lastDesired = new DesiredState(-1, List.of());

    TestNode(String base, String joinToken, String name, String fakeGpus) {
        this.name = name;
        this.link = new HttpServerLink(URI.create(base), joinToken,
                new HttpServerLink.Settings(Duration.ofSeconds(5), Duration.ofSeconds(30), 0, Duration.ofMillis(50)));
        FakeGpuBackend gpus = new FakeGpuBackend(fakeGpus, name);
        GpuDiscovery d = gpus.discover();
        this.inventory = new NodeInventory(name, 8, 64_000, d.backend(), "550.54.15", "12.4", d.gpus());
    }

    Registration register() throws LinkException {
        registration = link.register(new RegisterRequest(name, "test", inventory, running, nextSeq, killGraceMs, confinement, accounts));
        leaseEpoch = Math.max(leaseEpoch, registration.leaseEpoch());
        return registration;
    }

    String uuid(int gpu) {
        return inventory.gpus().get(gpu).uuid();
    }

    ReportResponse report(List<JobStatusReport> statuses, List<LogChunk> logs, List<GpuSample> gpus, long waitMs) throws LinkException {
        ReportResponse r = link.report(new NodeReport(name, System.currentTimeMillis(), applied, gpus, running, statuses, logs, waitMs,
                leaseEpoch, killGraceMs, accounts));
        leaseEpoch = Math.max(leaseEpoch, r.leaseEpoch()); // as an agent does: a newer epoch is adopted
        if (r.desired() != null) {
            applied = r.desired().version();
            lastDesired = r.desired();
        }
        return r;
    }

    ReportResponse report(JobStatusReport... statuses) throws LinkException {
        return report(List.of(statuses), List.of(), List.of(), 0);
    }

    /** A status report with the next seq. */
    JobStatusReport status(String jobId, int attempt, JobPhase phase, Integer exitCode) {
        long now = System.currentTimeMillis();
        return new JobStatusReport(nextSeq++, jobId, attempt, phase, exitCode, phase == JobPhase.RUNNING ? 4242L : null, now,
                phase.terminal() ? now : null, phase == JobPhase.RUNNING ? "started" : "exit code " + exitCode);
    }

    /** Reports until the desired state satisfies {@code p} (10 s at most). */
    DesiredState desiredUntil(Predicate<DesiredState> p) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!p.test(lastDesired)) {
            if (System.nanoTime() > deadline) throw new AssertionError("desired state of " + name + " never matched; last: " + lastDesired);
            report(List.of(), List.of(), List.of(), 200);
        }
        return lastDesired;
    }

    JobLaunch launch(String jobId) throws Exception {
        return desiredUntil(d -> d.jobs().stream().anyMatch(j -> j.jobId().equals(jobId))).jobs().stream()
                .filter(j -> j.jobId().equals(jobId)).findFirst().orElseThrow();
    }
}
