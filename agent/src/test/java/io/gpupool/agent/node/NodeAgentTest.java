package io.gpupool.agent.node;

import io.gpupool.agent.gpu.FakeGpuBackend;
import io.gpupool.agent.protocol.DesiredState;
import io.gpupool.agent.protocol.GpuSample;
import io.gpupool.agent.protocol.GrantedGpu;
import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.protocol.JobPhase;
import io.gpupool.agent.protocol.JobStatusReport;
import io.gpupool.agent.protocol.LogStream;
import io.gpupool.agent.run.RunnerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/** The agent loop against the in-memory server: reconciliation, buffering, restarts, logs, telemetry. */
class NodeAgentTest {

    @TempDir
    Path work;

    final TestAgents agents = new TestAgents();
    final InMemoryServerLink server = agents.server;

    @AfterEach
    void stopEverything() throws Exception {
        agents.close();
    }

    private NodeAgent agent() throws Exception {
        return agents.start(work, "4xA100-80GB", Duration.ofMillis(300));
    }

    private String gpu(NodeAgent a, int index) {
        return a.inventory().gpus().get(index).uuid();
    }

    private static JobLaunch sh(String id, String script, GrantedGpu... gpus) {
        return new JobLaunch(id, 0, List.of("sh", "-c", script), Map.of(), null, List.of(gpus));
    }

    /** Ticks until {@code done} holds (at most 15 s). */
    private static void tickUntil(NodeAgent a, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("condition not reached in 15 s");
            a.tick();
            Thread.sleep(20);
        }
    }

    private List<JobPhase> phases(String jobId) {
        return server.statusesOf(jobId).stream().map(JobStatusReport::phase).toList();
    }

    private boolean ended(String... jobIds) {
        for (String id : jobIds) if (server.statusesOf(id).stream().noneMatch(s -> s.phase().terminal())) return false;
        return true;
    }

    private List<String> launches() throws Exception {
        Path f = work.resolve("launches.txt");
        return Files.exists(f) ? Files.readAllLines(f) : List.of();
    }

    @Test
    void repeatedAndLateDesiredStatesNeverStartAJobTwice() throws Exception {
        NodeAgent a = agent();
        List<JobLaunch> jobs = List.of(
                sh("j1", "echo $GPUPOOL_JOB_ID >> ../../launches.txt; sleep 0.2", GrantedGpu.whole(gpu(a, 0))),
                sh("j2", "echo $GPUPOOL_JOB_ID >> ../../launches.txt; sleep 0.2", GrantedGpu.whole(gpu(a, 1))),
                sh("j3", "echo $GPUPOOL_JOB_ID >> ../../launches.txt; sleep 0.2", new GrantedGpu(gpu(a, 2), 500, 1024)));
        server.want(1, jobs);
        assertThat(a.tick().applied().started()).hasSize(3);
        server.deliver(new DesiredState(1, jobs)); // the same message again
        assertThat(a.tick().applied().started()).isEmpty();
        tickUntil(a, () -> ended("j1", "j2", "j3"));

        server.deliver(new DesiredState(0, jobs)); // a late, older message
        assertThat(a.tick().applied().stale()).isTrue();
        server.want(2, jobs); // newer, but the server has not yet taken in that they ended
        assertThat(a.tick().applied().started()).isEmpty();

        assertThat(launches()).containsExactlyInAnyOrder("j1", "j2", "j3");
        for (String j : List.of("j1", "j2", "j3")) assertThat(phases(j)).containsExactly(JobPhase.RUNNING, JobPhase.SUCCEEDED);
    }

    @Test
    void aJobTheServerNoLongerWantsIsStopped() throws Exception {
        NodeAgent a = agent();
        server.want(1, List.of(sh("long", "sleep 30")));
        a.tick();
        server.want(2, List.of());
        assertThat(a.tick().applied().stopped()).extracting(Object::toString).containsExactly("long#0");
        tickUntil(a, () -> ended("long"));
        JobStatusReport end = server.statusesOf("long").getLast();
        assertThat(end.phase()).isEqualTo(JobPhase.STOPPED);
        assertThat(end.message()).isEqualTo("stopped: the server no longer wants it (desired state 2); exited after SIGTERM with code 143");
    }

    @Test
    void statusesAreBufferedWhileTheServerIsUnreachableAndSentInOrderOnce() throws Exception {
        NodeAgent a = agent();
        server.want(1, List.of(sh("a", "exit 0"), sh("b", "exit 2"), sh("c", "sleep 0.3")));
        a.tick();
        server.reachable = false;
        // the jobs run to their end without the server (a job leaves the running list just before its end is recorded)
        tickUntil(a, () -> a.bufferedStatuses() == 6);
        assertThat(a.tick().connected()).isFalse();
        assertThat(a.runner().running()).isEmpty();

        server.reachable = true;
        server.loseNextAnswer = true; // the server stores them but the answer never arrives
        assertThat(a.tick().connected()).isFalse();
        assertThat(a.bufferedStatuses()).isEqualTo(6);
        assertThat(a.tick().statusesSent()).isEqualTo(6); // sent again
        a.tick();
        assertThat(a.bufferedStatuses()).isZero();

        assertThat(server.statuses()).extracting(JobStatusReport::seq).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
        assertThat(phases("a")).containsExactly(JobPhase.RUNNING, JobPhase.SUCCEEDED);
        assertThat(phases("b")).containsExactly(JobPhase.RUNNING, JobPhase.FAILED);
        assertThat(server.statusesOf("b").getLast().exitCode()).isEqualTo(2);
        assertThat(phases("c")).containsExactly(JobPhase.RUNNING, JobPhase.SUCCEEDED);
    }

    @Test
    void aRestartedAgentReadoptsItsJobsWithoutRelaunchingThem() throws Exception {
        NodeAgent first = agent();
        server.want(1, List.of(
                sh("long", "echo long >> ../../launches.txt; while [ ! -e ../../gate ]; do sleep 0.05; done"),
                sh("short", "echo short >> ../../launches.txt; while [ ! -e ../../gate2 ]; do sleep 0.05; done; exit 4")));
        first.tick();
        first.tick();
        long pid = server.statusesOf("long").getFirst().pid();
        first.close(); // the agent dies; the jobs go on
        agents.remove(first);

        Files.createFile(work.resolve("gate2"));
        Thread.sleep(300);
        NodeAgent second = agent();
        second.tick();
        assertThat(server.registrations.getLast().running()).anySatisfy(r -> {
            assertThat(r.jobId()).isEqualTo("long");
            assertThat(r.pid()).isEqualTo(pid);
        });
        Files.createFile(work.resolve("gate"));
        tickUntil(second, () -> ended("long", "short"));

        assertThat(launches()).containsExactlyInAnyOrder("long", "short");
        assertThat(phases("long")).containsExactly(JobPhase.RUNNING, JobPhase.SUCCEEDED);
        assertThat(phases("short")).containsExactly(JobPhase.RUNNING, JobPhase.FAILED);
        assertThat(server.statusesOf("short").getLast().exitCode()).isEqualTo(4);
    }

    @Test
    void anAttemptWaitsUntilTheJobHoldingItsGpuHasEnded() throws Exception {
        NodeAgent a = agent();
        String g0 = gpu(a, 0);
        server.want(1, List.of(sh("old", "trap '' TERM; touch ../../ready; sleep 30", GrantedGpu.whole(g0))));
        a.tick();
        tickUntil(a, () -> Files.exists(work.resolve("ready"))); // SIGTERM is ignored from here on
        server.want(2, List.of(sh("new", "true", GrantedGpu.whole(g0))));
        NodeAgent.Tick t = a.tick();
        assertThat(t.applied().stopped()).extracting(Object::toString).containsExactly("old#0");
        assertThat(t.applied().waiting()).containsValue("GPU " + g0 + " is still held by old#0");
        tickUntil(a, () -> ended("old", "new"));

        JobStatusReport oldEnd = server.statusesOf("old").getLast();
        JobStatusReport newStart = server.statusesOf("new").getFirst();
        assertThat(oldEnd.message()).endsWith("killed with SIGKILL after a grace period of 300 ms");
        assertThat(newStart.startedAtMs()).isGreaterThanOrEqualTo(oldEnd.endedAtMs());
    }

    @Test
    void logsReachTheServerCompletelyAndOnceDespiteALostAnswer() throws Exception {
        NodeAgent a = agent();
        // 300 KB of stdout needs several reports at 256 KiB each.
        server.want(1, List.of(sh("chatty", "echo first; head -c 300000 /dev/zero | tr '\\0' x; echo; echo last; echo oops >&2")));
        a.tick();
        tickUntil(a, () -> ended("chatty"));
        server.loseNextAnswer = true;
        a.tick();
        tickUntil(a, () -> server.log("chatty", 0, LogStream.STDOUT).endsWith("last\n") && !server.log("chatty", 0, LogStream.STDERR).isEmpty());
        a.tick(); // resends what the lost answer did not acknowledge; the server keeps one copy
        a.tick();

        Path dir = a.runner().store().find(new io.gpupool.agent.protocol.JobKey("chatty", 0)).orElseThrow().path();
        assertThat(server.log("chatty", 0, LogStream.STDOUT)).isEqualTo(Files.readString(dir.resolve("stdout.log")));
        assertThat(server.log("chatty", 0, LogStream.STDERR)).isEqualTo("oops\n");
        assertThat(server.reports.getLast().logs()).as("nothing left to send").isEmpty();
    }

    @Test
    void fakeTelemetryFollowsTheJobsInTheRunningLoop() throws Exception {
        NodeAgent a = agent();
        String g1 = gpu(a, 1);
        server.want(1, List.of(sh("half", "sleep 30", new GrantedGpu(g1, 500, 20480))));
        a.start();
        assertThat(eventuallyTrue(() -> server.reports.size() > 3 && !server.reports.getLast().running().isEmpty())).isTrue();
        GpuSample s = server.reports.getLast().gpus().get(1);
        assertThat(s.memoryUsedMib()).isEqualTo(20480);
        assertThat(s.utilizationPercent()).isEqualTo(50);
        assertThat(s.processes()).singleElement().satisfies(p -> assertThat(p.pid()).isEqualTo(server.reports.getLast().running().getFirst().pid()));
        assertThat(server.reports.getLast().gpus().get(0).memoryUsedMib()).isZero();
    }

    @Test
    void aNewServerStoreResetsTheVersionTheAgentExpects() throws Exception {
        NodeAgent a = agent();
        server.want(7, List.of());
        a.tick();
        server.epoch = "epoch-2";
        server.forgetNode = true;
        assertThat(a.tick().connected()).isFalse();
        server.want(1, List.of(sh("fresh", "true")));
        NodeAgent.Tick t = a.tick(); // registers again, learns the new epoch
        assertThat(t.applied().stale()).isFalse();
        assertThat(t.applied().started()).extracting(Object::toString).containsExactly("fresh#0");
        assertThat(server.registrations).hasSize(2);
    }

    @Test
    void anAgentCutOffFromTheServerStopsItsJobsWhenItsLeaseRunsOut() throws Exception {
        server.nodeLostTimeoutMs = 1200; // the lease: 1.2 s from the send time of the last report the server applied
        NodeAgent a = agent();
        server.want(1, List.of(sh("cut", "sleep 30")));
        long sentAtLastApplied = System.nanoTime();
        a.tick();
        server.reachable = false;
        a.tick();
        assertThat(a.runner().running()).as("a short outage changes nothing").singleElement()
                .satisfies(j -> assertThat(j.stopping()).isFalse());
        tickUntil(a, () -> a.runner().running().isEmpty());
        // the fence keeper reads /proc/uptime in centiseconds and the deadline is rounded down to them (fencing early is
        // the safe side), so it may act up to two centiseconds before the lease's exact end; never earlier
        assertThat(System.nanoTime() - sentAtLastApplied).as("fenced only once the lease ran out").isGreaterThanOrEqualTo(1_200_000_000L - 20_000_000L);
        server.reachable = true;
        tickUntil(a, () -> ended("cut"));
        JobStatusReport end = server.statusesOf("cut").getLast();
        assertThat(end.phase()).isEqualTo(JobPhase.STOPPED);
        // the agent's watchdog or the fence keeper, whichever came first: both act when the lease runs out
        assertThat(end.message()).matches("fenced: the node's lease ran out (\\(no report applied by the server for 1 s; "
                + "the server declares the node lost after 1 s and then runs its jobs elsewhere\\)|and the fence keeper stopped the job).*");
    }

    @Test
    void anAnswerThatArrivesAfterTheLeaseRanOutStartsNothing() throws Exception {
        server.nodeLostTimeoutMs = 600;
        NodeAgent a = agent();
        a.tick();
        server.answerDelayMs = 700; // the report's lease (600 ms from its send time) has run out when its answer arrives
        server.want(1, List.of(sh("late", "true")));
        NodeAgent.Tick t = a.tick();
        assertThat(t.applied().started()).isEmpty();
        assertThat(t.applied().waiting()).containsValue(Reconciler.LEASE_RAN_OUT);
        assertThat(a.runner().store().started(new JobKey("late", 0))).as("no directory: the attempt may still start later").isFalse();
        server.answerDelayMs = 0;
        tickUntil(a, () -> ended("late")); // a prompt answer renews the lease, and the attempt starts
        assertThat(server.statusesOf("late").getLast().phase()).isEqualTo(JobPhase.SUCCEEDED);
    }

    @Test
    void aReportFromAnOlderLeaseEpochRenewsNothingAndTheAgentReportsAgainUnderTheNewOne() throws Exception {
        server.nodeLostTimeoutMs = 800;
        NodeAgent a = agent();
        server.want(1, List.of(sh("old", "sleep 30")));
        a.tick();
        server.leaseEpoch = 1; // the server declared the node lost meanwhile and wants nothing on it
        server.want(2, List.of());
        int applied = server.reports.size();
        NodeAgent.Tick t = a.tick();
        assertThat(server.reports).as("the report under epoch 0 was not applied").hasSize(applied);
        assertThat(t.applied().stopped()).extracting(Object::toString).containsExactly("old#0");
        tickUntil(a, () -> ended("old"));
        assertThat(server.reports.getLast().leaseEpoch()).isEqualTo(1);
        assertThat(a.leaseValid()).isTrue();
    }

    @Test
    void theFenceKeeperStopsTheJobsOfAnAgentThatIsGoneWhenTheLeaseRunsOut() throws Exception {
        server.nodeLostTimeoutMs = 1500;
        NodeAgent a = agent();
        server.want(1, List.of(sh("orphan", "sleep 30")));
        a.tick();
        long pid = a.runner().running().iterator().next().pid();
        ProcessHandle keeper = a.keeperProcess().orElseThrow();
        agents.remove(a);
        a.close(); // as if killed: the job runs on, nothing renews the lease
        assertThat(ProcessHandle.of(pid)).as("the job outlives its agent").isPresent();
        assertThat(eventuallyTrue(() -> ProcessHandle.of(pid).isEmpty())).as("the keeper stopped it").isTrue();
        assertThat(work.resolve("jobs/orphan.0/fenced")).exists();
        assertThat(eventuallyTrue(() -> !keeper.isAlive())).as("the keeper ends once nothing runs").isTrue();

        NodeAgent b = agent(); // the next agent on this work directory reports how the job ended
        tickUntil(b, () -> ended("orphan"));
        JobStatusReport end = server.statusesOf("orphan").getLast();
        assertThat(end.phase()).isEqualTo(JobPhase.STOPPED);
        assertThat(end.message()).isEqualTo("fenced: the node's lease ran out and the fence keeper stopped the job while the agent was down");
    }

    @Test
    void theFenceKeeperLeavesTheJobsAloneWhileTheAgentRenewsItsLease() throws Exception {
        server.nodeLostTimeoutMs = 600;
        NodeAgent a = agent();
        server.want(1, List.of(sh("kept", "sleep 30")));
        a.tick();
        long until = System.nanoTime() + Duration.ofMillis(2000).toNanos(); // more than three leases
        while (System.nanoTime() < until) {
            a.tick();
            Thread.sleep(50);
        }
        assertThat(a.runner().running()).singleElement().satisfies(j -> assertThat(j.stopping()).isFalse());
        assertThat(work.resolve("jobs/kept.0/fenced")).doesNotExist();
        assertThat(a.keeperProcess()).isPresent();
    }

    @Test
    void withoutFencingJobsOutliveALongOutage() throws Exception {
        server.nodeLostTimeoutMs = 1200;
        FakeGpuBackend gpus = new FakeGpuBackend("1xT4", "n1");
        NodeAgent a = new NodeAgent(NodeAgent.Config.defaults("n1", work).withFence(false)
                .withRunner(RunnerConfig.defaults(work).withKillGrace(Duration.ofMillis(300)))
                .withReportInterval(Duration.ofMillis(50)), gpus, gpus.discover(), server);
        agents.add(a);
        server.want(1, List.of(sh("keep", "sleep 30")));
        a.tick();
        server.reachable = false;
        long until = System.currentTimeMillis() + 1500;
        while (System.currentTimeMillis() < until) {
            a.tick();
            Thread.sleep(50);
        }
        assertThat(a.runner().running()).hasSize(1);
    }

    @Test
    void aConfinedNodeRegistersWhatItEnforcesAndItsFakeGpusGetDeviceNodesOfTheirOwn() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(io.gpupool.agent.confine.ConfinedCgroups.isRoot(), "cgroups are made by root only");
        try (io.gpupool.agent.confine.ConfinedCgroups cgroups = new io.gpupool.agent.confine.ConfinedCgroups()) {
            org.junit.jupiter.api.Assumptions.assumeTrue(!cgroups.layout.mode().equals("none"), "no cgroup file system is mounted here");
            Path dev = work.resolve("dev");
            FakeGpuBackend gpus = new FakeGpuBackend("2xT4", cgroups.node);
            NodeAgent a = new NodeAgent(NodeAgent.Config.defaults(cgroups.node, work)
                    .withRunner(RunnerConfig.defaults(work).withKillGrace(Duration.ofMillis(300)))
                    .withConfine(new io.gpupool.agent.confine.Confinement.Settings(true, 256, dev)), gpus, gpus.discover(), server);
            agents.add(a);
            assertThat(dev.resolve("nvidia0")).exists();
            assertThat(dev.resolve("nvidiactl")).exists();
            server.want(1, List.of(sh("dev", "echo $GPUPOOL_DEVICE_NODES; cat " + dev.resolve("nvidia0") + "; cat " + dev.resolve("nvidia1") + "; true",
                    GrantedGpu.whole(gpu(a, 1)))));
            tickUntil(a, () -> server.statusesOf("dev").stream().anyMatch(st -> st.phase().terminal()));

            assertThat(server.registrations.getFirst().confinement()).isEqualTo(a.confinement());
            assertThat(a.confinement().mode()).isEqualTo(cgroups.layout.mode());
            assertThat(a.confinement().enforced()).anyMatch(e -> e.startsWith("devices("));
            var dir = a.runner().store().find(new io.gpupool.agent.protocol.JobKey("dev", 0)).orElseThrow();
            assertThat(java.nio.file.Files.readString(dir.stdout())).isEqualTo(dev.resolve("nvidia1") + "\n");
            // no NVIDIA driver here: the granted node passes the filter and finds no driver (ENXIO), the other is refused (EPERM)
            assertThat(java.nio.file.Files.readString(dir.stderr())).contains(dev.resolve("nvidia0") + ": Operation not permitted")
                    .contains(dev.resolve("nvidia1") + ": No such device or address");
            a.runner().stopAll("test over", Duration.ofSeconds(5));
            a.close();
            agents.remove(a);
            assertThat(cgroups.leftoverGroups()).isEmpty();
        }
    }

    private static boolean eventuallyTrue(BooleanSupplier c) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (System.nanoTime() < deadline) {
            if (c.getAsBoolean()) return true;
            Thread.sleep(20);
        }
        return false;
    }
}
