package io.gpupool.server;

import io.gpupool.agent.AgentLauncher;
import io.gpupool.agent.confine.Confinement;
import io.gpupool.agent.node.NodeAgent;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Test fixture: runs a node agent with fake GPUs as its own process, so a test can kill it with SIGKILL.
 * Arguments: SERVER_URL JOIN_TOKEN NODE_NAME WORK_DIR FAKE_GPUS KILL_GRACE_MS [as-installed]. "as-installed": as
 * {@code gpupool agent} runs jobs as root by default, each in cgroups of its own (the fake GPUs' device nodes under
 * WORK_DIR/devices) and, where the job names no account, as nobody; without it, unconfined and as the agent's account.
 */
public final class AgentProcessMain {
    private AgentProcessMain() {}

    public static void main(String[] args) throws Exception {
        AgentLauncher.Options o = AgentLauncher.Options.fake(args[0], args[1], args[2], Path.of(args[3]), args[4])
                .withKillGrace(Duration.ofMillis(Long.parseLong(args[5])));
        if (args.length > 6 && args[6].equals("as-installed")) {
            // (the canonical constructor, not a with-method: bench/agent-start-e2e.sh runs this file against older commits)
            o = new AgentLauncher.Options(o.server(), o.joinToken(), o.nodeName(), o.workDir(), o.gpus(), o.reportInterval(), o.killGrace(),
                    o.memoryPolicy(), o.fence(), o.version(), o.ca(), "nobody", o.allowRootJobs(),
                    Confinement.Settings.on().withFakeDeviceDir(Path.of(args[3]).resolve("devices")), o.wrapper());
        }
        NodeAgent agent = AgentLauncher.start(o);
        System.out.println("agent " + args[2] + " started with " + agent.inventory().gpus().size() + " GPUs");
        System.out.flush();
        Thread.currentThread().join();
    }
}
