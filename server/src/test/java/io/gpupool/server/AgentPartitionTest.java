package io.gpupool.server;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.gpupool.server.FaultRig.waitFor;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A real network partition (network namespace, veth pair, the link taken down: packets dropped, nothing refused)
 * between the server and one agent, while jobs run there; another agent outside keeps working.
 * <ol>
 *   <li>a partition shorter than the lease changes nothing: the jobs run on as their first attempt;</li>
 *   <li>a partition past the give-up time: the agent stops its jobs when its lease runs out, the server re-places
 *       them (or fails them, restart policy fail) only after the lease, the kill grace and the margin, and when the
 *       link is back the agent's late reports change nothing;</li>
 * </ol>
 * and the invariants of {@link FaultRig#checkInvariants}: no job lost, none run twice at once.
 */
@EnabledOnOs(OS.LINUX)
class AgentPartitionTest {
    private static final long REPORT_MS = 250;
    private static final long LOST_MS = 6_000;
    private static final long KILL_GRACE_MS = 500;
    private static final long MARGIN_MS = 2_000;
    private static final List<String> L40S = List.of("L40S");

    @TempDir Path dir;

    @Test
    void a_short_and_a_long_partition_lose_no_job_and_run_none_twice() throws Exception {
        String why = NetworkPartition.unavailableBecause();
        if (System.getenv("GPUPOOL_CI") != null) assertThat(why).as("CI runs as root with iproute2").isNull();
        assumeTrue(why == null, why);
        try (NetworkPartition net = NetworkPartition.create();
             FaultRig rig = new FaultRig(dir, net.hostIp(), REPORT_MS, LOST_MS, KILL_GRACE_MS, MARGIN_MS)) {
            rig.startServer("server.log");
            rig.setUp("fcfs-backfill");
            rig.launchAgent(net.exec(), "p-inside", "8xL40S", rig.base, "inside.log");
            rig.launchAgent(List.of(), "p-outside", "8xL40S", rig.base, "outside.log");
            waitFor(Duration.ofSeconds(90), "both nodes ready", () -> rig.nodesIn("ready").size() == 2);
            List<String> all = new ArrayList<>();

            // 1. a partition shorter than the lease
            rig.cordon("p-outside", true);
            List<String> brief = rig.submit(6, L40S, 9.0, 10.0, "requeue", 1);
            all.addAll(brief);
            waitFor(Duration.ofSeconds(60), "jobs run inside", () -> rig.runningOn("p-inside", brief).size() == brief.size());
            rig.cordon("p-outside", false);
            net.cut();
            FaultRig.sleep(LOST_MS / 2);
            net.restore();
            rig.waitForEnd(brief);
            for (String id : brief) {
                JsonNode j = rig.job(id);
                assertThat(j.path("state").asText()).as(id).isEqualTo("SUCCEEDED");
                assertThat(j.path("attempt").asInt()).as(id + " ran on through the partition").isEqualTo(1);
            }

            // 2. a partition past the give-up time
            rig.cordon("p-outside", true);
            // they run until the gate opens: none ends by itself before the lease runs out, however slow the machine
            List<String> longer = new ArrayList<>(rig.submitGated(6, L40S, "requeue", 2, "2"));
            List<String> failing = rig.submitGated(2, L40S, "fail", 3, "2");
            longer.addAll(failing);
            all.addAll(longer);
            waitFor(Duration.ofSeconds(60), "jobs run inside", () -> rig.runningOn("p-inside", longer).size() == longer.size());
            rig.cordon("p-outside", false);
            long cutAt = System.currentTimeMillis();
            net.cut();
            waitFor(Duration.ofSeconds(30), "the node inside is lost", () -> rig.nodesIn("lost").contains("p-inside"));
            waitFor(Duration.ofSeconds(30), "its jobs are given up", () -> longer.stream().noneMatch(id -> rig.job(id).path("attempt").asInt() == 1
                    && rig.state(id).equals("RUNNING")));
            for (String id : longer) {
                long gaveUpAt = Math.max(rig.eventAt(id, "REQUEUED"), rig.eventAt(id, "FAILED"));
                assertThat(gaveUpAt - cutAt).as(id + " given up only after the lease, the kill grace and the margin")
                        .isGreaterThanOrEqualTo(rig.giveUpMs() - 2 * REPORT_MS);
            }
            net.restore();
            waitFor(Duration.ofSeconds(60), "the node inside is back", () -> rig.nodesIn("ready").contains("p-inside"));
            rig.openGate("2");
            rig.waitForEnd(longer);
            waitFor(Duration.ofSeconds(30), "the agent inside reports how attempt 1 ended", () -> longer.stream().allMatch(id ->
                    rig.job(id).path("attempts").get(0).path("state").asText().equals("STOPPED")));
            for (String id : longer) {
                JsonNode j = rig.job(id);
                assertThat(j.path("attempts").get(0).path("message").asText()).as(id).startsWith("fenced: the node's lease ran out");
                if (failing.contains(id)) {
                    assertThat(j.path("state").asText()).as(id).isEqualTo("FAILED");
                    assertThat(j.path("message").asText()).contains("p-inside lost", "restart policy fail");
                } else {
                    assertThat(j.path("state").asText()).as(id).isEqualTo("SUCCEEDED");
                    assertThat(j.path("attempts").get(1).path("node").asText()).as(id).isEqualTo("p-outside");
                }
            }
            rig.checkInvariants(all);
        }
    }
}
