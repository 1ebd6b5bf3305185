package io.gpupool.agent;

import io.gpupool.agent.confine.Confinement;
import io.gpupool.agent.gpu.GpuBackendException;
import io.gpupool.agent.gpu.GpuBackends;
import io.gpupool.agent.gpu.LocalNode;
import io.gpupool.agent.link.HttpServerLink;
import io.gpupool.agent.link.ServerList;
import io.gpupool.agent.link.LinkException;
import io.gpupool.agent.node.NodeAgent;
import io.gpupool.agent.run.RunnerConfig;
import io.gpupool.agent.tls.ServerTrust;
import io.gpupool.model.SpecException;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Puts a node agent together from its settings: the GPU backend, the HTTP link to the server, the job runner
 * on the work directory. {@code gpupool agent} and the demo's in-process agents start here. A wrong TLS or URL
 * setting fails the start; a server that is merely down does not (the agent keeps trying to reach it).
 */
public final class AgentLauncher {

    /**
     * @param server         the server's URL
     * @param joinToken      a token of role agent
     * @param nodeName       the node's name in the pool; null = this machine's host name
     * @param workDir        job directories, logs and the agent's state
     * @param gpus           which GPU backend (fake GPUs are seeded by the node name, so agents differ)
     * @param reportInterval longest time between reports until the server sets its own
     * @param killGrace      SIGTERM to SIGKILL
     * @param memoryPolicy   what happens to a job holding more GPU memory than granted
     * @param fence          stop the jobs when the node's lease runs out (no report applied by the server for its
     *                       node-lost timeout), by this agent or, if it is dead or paused, by its fence keeper
     * @param version        reported at registration
     * @param ca             PEM file of the CA that signed an https:// server's certificate; null = the system trust store
     * @param unboundAccount the Unix account of jobs that name none, when the agent is root (null: the agent's own)
     * @param allowRootJobs  whether a job may run with uid 0
     * @param confine        the jobs' cgroups (null: none, as in-process agents of the demo and the tests run)
     * @param wrapper        which program jobs run in (null: the native wrapper where there is one, else the shell's)
     */
    public record Options(String server, String joinToken, String nodeName, Path workDir, GpuBackends.Options gpus,
                          Duration reportInterval, Duration killGrace, RunnerConfig.MemoryPolicy memoryPolicy, boolean fence,
                          String version, Path ca, String unboundAccount, boolean allowRootJobs, Confinement.Settings confine,
                          RunnerConfig.WrapperChoice wrapper) {
        public Options {
            if (confine == null) confine = Confinement.Settings.off();
            if (nodeName == null || nodeName.isBlank()) nodeName = LocalNode.hostname();
            if (!nodeName.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,252}")) {
                throw new SpecException("--node-name", "node-name", "must be 1-253 letters, digits, '.', '_' or '-', starting with a letter or digit, got '" + nodeName + "'");
            }
            if (workDir == null) throw new SpecException("--work-dir", "work-dir", "is required");
            if (reportInterval == null || reportInterval.toMillis() < 10) {
                throw new SpecException("--report-interval", "report-interval", "must be at least 10 ms");
            }
        }

        /** Fake GPUs ({@code 8xA100-80GB,...}) and defaults for everything else: the demo's and the tests' agents. */
        public static Options fake(String server, String joinToken, String nodeName, Path workDir, String fakeGpus) {
            return new Options(server, joinToken, nodeName, workDir, new GpuBackends.Options(null, null, null, fakeGpus, null),
                    Duration.ofSeconds(5), RunnerConfig.DEFAULT_KILL_GRACE, RunnerConfig.MemoryPolicy.KILL, true, "dev", null, null, false, null, null);
        }

        public Options withKillGrace(Duration d) {
            return new Options(server, joinToken, nodeName, workDir, gpus, reportInterval, d, memoryPolicy, fence, version, ca,
                    unboundAccount, allowRootJobs, confine, wrapper);
        }

        public Options withCa(Path file) {
            return new Options(server, joinToken, nodeName, workDir, gpus, reportInterval, killGrace, memoryPolicy, fence, version, file,
                    unboundAccount, allowRootJobs, confine, wrapper);
        }

        public Options withUnboundAccount(String account) {
            return new Options(server, joinToken, nodeName, workDir, gpus, reportInterval, killGrace, memoryPolicy, fence, version, ca,
                    account, allowRootJobs, confine, wrapper);
        }
    }

    private AgentLauncher() {
    }

    /**
     * Discovers the GPUs, re-adopts the jobs still running in the work directory and starts the agent's loop.
     *
     * @throws GpuBackendException when no GPU backend works here
     * @throws SpecException       for bad settings
     */
    public static NodeAgent start(Options o) throws GpuBackendException, IOException {
        GpuBackends.Options g = o.gpus();
        if (g.fakeGpus() != null && g.fakeSeed() == null) {
            g = new GpuBackends.Options(g.backend(), g.nvmlLibrary(), g.nvidiaSmi(), g.fakeGpus(), o.nodeName());
        }
        // one URL, or several replicas of the service (comma-separated): the link follows the active one
        ServerList servers = ServerList.parse(o.server(), "--server");
        HttpServerLink link = new HttpServerLink(servers, o.joinToken(), HttpServerLink.Settings.defaults(), ServerTrust.of(o.ca()));
        try {
            link.checkTransport();
        } catch (LinkException e) {
            throw new SpecException(null, null, e.getMessage());
        }
        GpuBackends.Opened opened = GpuBackends.open(g);
        NodeAgent.Config config = NodeAgent.Config.defaults(o.nodeName(), o.workDir())
                .withReportInterval(o.reportInterval())
                .withRunner(RunnerConfig.defaults(o.workDir()).withKillGrace(o.killGrace()).withMemoryPolicy(o.memoryPolicy())
                        .withAccounts(o.unboundAccount(), o.allowRootJobs()).withWrapper(o.wrapper()))
                .withFence(o.fence())
                .withAgentVersion(o.version())
                .withConfine(o.confine());
        NodeAgent agent;
        try {
            agent = new NodeAgent(config, opened.backend(), opened.discovery(), link);
        } catch (IOException | RuntimeException e) {
            opened.backend().close();
            throw e;
        }
        agent.start();
        return agent;
    }
}
