package io.gpupool.cli;

import io.gpupool.agent.AgentLauncher;
import io.gpupool.agent.confine.Confinement;
import io.gpupool.agent.gpu.GpuBackendException;
import io.gpupool.agent.node.NodeAgent;
import io.gpupool.agent.run.RunnerConfig;
import io.gpupool.model.BuildInfo;
import io.gpupool.model.SpecException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code gpupool agent}: the node agent of one GPU server. */
@Command(name = "agent",
        header = "Run the node agent of this GPU server: register it with a gpupool server and run the jobs placed here.",
        description = "Discovers the GPUs (NVML, else nvidia-smi; or --fake-gpus), registers the node with a join token "
                + "(an admin creates one: POST /api/v1/agent-tokens), then reports telemetry, job statuses and output and "
                + "runs the jobs the server places here with CUDA_VISIBLE_DEVICES set to their GPUs. Jobs outlive the agent: "
                + "an agent restarted on the same --work-dir takes them back. Stop it with Ctrl-C (jobs keep running).%n")
public final class AgentCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Option(names = "--server", required = true, paramLabel = "URL", description = "The gpupool server, e.g. https://gpupool:8080; several replicas comma-separated (the agent follows the active one).")
    String server;

    @Option(names = "--ca", paramLabel = "FILE",
            description = "PEM file of the CA that signed an https:// server's certificate (a private CA; default: $GPUPOOL_CA, else the system trust store).")
    Path ca;

    @Option(names = "--token", paramLabel = "T", description = "A join token (role agent); default: $GPUPOOL_AGENT_TOKEN.")
    String token;

    @Option(names = "--node-name", paramLabel = "NAME", description = "The node's name in the pool (default: the host name).")
    String nodeName;

    @Option(names = "--work-dir", defaultValue = "gpupool-agent", paramLabel = "DIR",
            description = "Job directories (logs, exit codes) and the agent's state (default: ./${DEFAULT-VALUE}).")
    Path workDir;

    @Mixin GpuDiscoveryOptions discovery;

    @Option(names = "--kill-grace", defaultValue = "10", paramLabel = "SEC", description = "SIGTERM to SIGKILL when a job is stopped (default: ${DEFAULT-VALUE}).")
    double killGraceSec;

    @Option(names = "--memory-policy", defaultValue = "kill", paramLabel = "POLICY",
            description = "A job holding more GPU memory than granted: warn or kill (default: ${DEFAULT-VALUE}).")
    String memoryPolicy;

    @Option(names = "--no-fence", description = "Keep jobs running however long the server is out of reach (default: stop them when the node's lease runs out, "
            + "also by a fence keeper process if the agent is dead or paused, so the server can run them elsewhere without running them twice).")
    boolean noFence;

    @Option(names = "--unbound-job-user", defaultValue = "nobody", paramLabel = "USER",
            description = "The Unix account of jobs that name none (their token is not bound to an account), when the agent is root "
                    + "(default: ${DEFAULT-VALUE}).")
    String unboundUser;

    @Option(names = "--allow-root-jobs", description = "Let jobs run with uid 0 (off: a job whose account has uid 0 fails to start).")
    boolean allowRootJobs;

    private Path caFile() {
        if (ca != null) return ca;
        String env = System.getenv("GPUPOOL_CA");
        return env == null || env.isBlank() ? null : Path.of(env);
    }

    @Option(names = "--job-wrapper", defaultValue = "auto", paramLabel = "KIND",
            description = "The program every job runs in: native (gpupool-jobwrap, built with gpupool where a C compiler was at hand), "
                    + "shell (sh, with setpriv to switch accounts), or auto: native where there is one (default: ${DEFAULT-VALUE}).")
    String jobWrapper;

    @Option(names = "--no-confine", description = "Run jobs without cgroups (default: one cgroup per attempt with its host CPU and "
            + "memory, a pids limit and only its GPUs' device nodes; needs root, else jobs run unconfined and the node says why).")
    boolean noConfine;

    @Option(names = "--job-pids-max", defaultValue = "32768", paramLabel = "N",
            description = "Processes and threads per job at most, 0 for no limit (default: ${DEFAULT-VALUE}).")
    long jobPidsMax;

    @Option(names = "--fake-device-dir", paramLabel = "DIR",
            description = "With --fake-gpus: make real device nodes for the fake GPUs here (nvidiaN, major 195, and nvidiactl) "
                    + "and confine jobs' device access to their own (tests of the device filter without a GPU).")
    Path fakeDeviceDir;

    @Override
    public Integer call() throws Exception {
        String t = token != null ? token : System.getenv("GPUPOOL_AGENT_TOKEN");
        if (t == null || t.isBlank()) throw new SpecException("--token", "token", "is required (or $GPUPOOL_AGENT_TOKEN): a join token from POST /api/v1/agent-tokens");
        RunnerConfig.MemoryPolicy policy = switch (memoryPolicy.toLowerCase(java.util.Locale.ROOT)) {
            case "warn" -> RunnerConfig.MemoryPolicy.WARN;
            case "kill" -> RunnerConfig.MemoryPolicy.KILL;
            default -> throw new SpecException("--memory-policy", "memory-policy", "must be warn or kill, got '" + memoryPolicy + "'");
        };
        if (!(killGraceSec >= 0 && killGraceSec <= 3600)) throw new SpecException("--kill-grace", "kill-grace", "must be in 0..3600 seconds");
        if (jobPidsMax < 0) throw new SpecException("--job-pids-max", "job-pids-max", "must be >= 0 (0: no limit)");
        RunnerConfig.WrapperChoice wrapper = switch (jobWrapper.toLowerCase(java.util.Locale.ROOT)) {
            case "auto" -> RunnerConfig.WrapperChoice.AUTO;
            case "native" -> RunnerConfig.WrapperChoice.NATIVE;
            case "shell" -> RunnerConfig.WrapperChoice.SHELL;
            default -> throw new SpecException("--job-wrapper", "job-wrapper", "must be auto, native or shell, got '" + jobWrapper + "'");
        };
        if (fakeDeviceDir != null && discovery.fakeGpus == null) throw new SpecException("--fake-device-dir", "fake-device-dir", "only works with --fake-gpus");
        Confinement.Settings confine = new Confinement.Settings(!noConfine, jobPidsMax,
                fakeDeviceDir == null ? null : fakeDeviceDir.toAbsolutePath());
        AgentLauncher.Options o = new AgentLauncher.Options(server, t, nodeName, workDir,
                discovery.backendOptions(null), Duration.ofSeconds(5),
                Duration.ofMillis(Math.round(killGraceSec * 1000)), policy, !noFence, BuildInfo.current().describe(), caFile(), unboundUser,
                allowRootJobs, confine, wrapper);
        PrintWriter out = spec.commandLine().getOut();
        NodeAgent agent;
        try {
            agent = AgentLauncher.start(o);
        } catch (GpuBackendException e) {
            throw new SpecException("--backend " + discovery.backend, "backend", e.getMessage());
        }
        out.printf("gpupool agent: node %s, %d GPU(s) (%s), work directory %s, server %s%n", o.nodeName(), agent.inventory().gpus().size(),
                agent.inventory().backend(), workDir.toAbsolutePath(), server);
        String whyNot = agent.runner().accounts().whyNot();
        out.println(whyNot == null ? "gpupool agent: jobs run as their owners' Unix accounts (jobs that name none: " + unboundUser + ")"
                : "gpupool agent: WARNING: " + whyNot + "; its node isolation is 'shared account'");
        out.printf("confinement: %s%n", agent.confinement());
        out.printf("job start: %s%n", agent.runner().spawnMethod());
        out.flush();
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            agent.close(); // jobs keep running: the next agent on this work directory takes them back
            stopped.countDown();
        }, "gpupool-agent-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        agent.incompatibleServer().thenRun(stopped::countDown);
        stopped.await();
        String incompatible = agent.incompatibleServer().getNow(null);
        if (incompatible != null) {
            // the server speaks another agent protocol version: stop with one line (exit 2), as for a wrong setting
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway
            }
            agent.close();
            throw new SpecException(null, null, incompatible);
        }
        return 0;
    }
}
