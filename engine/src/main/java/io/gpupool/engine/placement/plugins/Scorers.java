package io.gpupool.engine.placement.plugins;

import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.placement.ScorePlugin;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.NodeSpec;

/** The built-in node scorers. Each is registered by name in {@code PlacementPlugins}. */
public final class Scorers {
    private Scorers() {}

    static long demandMilli(ReplicaDemand d) {
        return (long) d.gpus() * (d.exclusive() ? 1000 : d.milli());
    }

    /**
     * The node's utilisation after placing: of its GPUs; for a CPU-only replica (whose placement leaves every
     * node's GPU use as it is) of its host, CPU and memory half and half.
     */
    static double utilisationAfter(ReplicaDemand d, NodeState n) {
        if (d.gpus() > 0) return (n.usedMilli() + demandMilli(d)) / (double) (n.gpuCount() * 1000L);
        NodeSpec s = n.spec();
        double cpu = s.cpuMilli() == 0 ? 0 : (s.cpuMilli() - n.freeCpuMilli() + d.host().cpuMilli()) / (double) s.cpuMilli();
        double mem = s.memoryMib() == 0 ? 0 : (s.memoryMib() - n.freeHostMemoryMib() + d.host().memoryMib()) / (double) s.memoryMib();
        return 0.5 * cpu + 0.5 * mem;
    }

    /** Fill the busiest node first (HAMi's binpack node policy): utilisation after placing. */
    public static final class Binpack implements ScorePlugin {
        @Override public String name() { return "binpack"; }

        @Override
        public double score(CycleState c, ReplicaDemand d, NodeState n, int[] gpus) {
            return utilisationAfter(d, n);
        }
    }

    /** Use the emptiest node first (HAMi's spread): the opposite of binpack. */
    public static final class Spread implements ScorePlugin {
        @Override public String name() { return "spread"; }

        @Override
        public double score(CycleState c, ReplicaDemand d, NodeState n, int[] gpus) {
            return -utilisationAfter(d, n);
        }

        @Override public boolean prefersTightNodes() { return false; }

        @Override public String defaultGpuPolicy() { return "spread"; }
    }

    /**
     * Least capacity left over of the kind the job uses: idle GPUs for whole GPUs, the share on the chosen GPU.
     * A job that asks for host resources weighs GPU and CPU left half and half, each over the pool's largest
     * node (the FGD paper's best-fit baseline); so does a CPU-only one, whose placement leaves the GPU term as it is.
     */
    public static final class BestFit implements ScorePlugin {
        @Override public String name() { return "best-fit"; }

        @Override
        public double score(CycleState c, ReplicaDemand d, NodeState n, int[] gpus) {
            if (d.host().requested()) {
                double gpuLeft = (n.freeMilliTotal() - demandMilli(d)) / (1000.0 * c.cluster().maxGpusPerNode());
                double cpuLeft = (n.freeCpuMilli() - d.host().cpuMilli()) / (double) Math.max(1, c.cluster().maxCpuMilliPerNode());
                return -(0.5 * gpuLeft + 0.5 * cpuLeft);
            }
            if (d.exclusive()) return -(n.fullyFreeGpus() - d.gpus());
            return -(n.freeMilli(gpus[0]) - d.milli());
        }
    }

    /** A replica inside one NVLink domain; a gang on the nodes its other replicas use (fewest nodes). */
    public static final class Topology implements ScorePlugin {
        @Override public String name() { return "topology"; }

        @Override
        public double score(CycleState c, ReplicaDemand d, NodeState n, int[] gpus) {
            double s = 0;
            if (gpus.length > 1) {
                int domains = n.domainCount();
                long seen = 0;
                int span = 0;
                for (int g : gpus) {
                    int grp = WholeGpuChooser.group(n, g, domains);
                    if ((seen & (1L << grp)) == 0) { seen |= 1L << grp; span++; }
                }
                s += 100.0 / span;
            }
            if (c.gangNodes().contains(n.id())) s += 100;
            return s;
        }
    }

    /** Fragmentation gradient descent: the least growth in the node's fragmentation (Weng et al., ATC'23). */
    public static final class Fgd implements ScorePlugin {
        @Override public String name() { return "fgd"; }

        @Override
        public double score(CycleState c, ReplicaDemand d, NodeState n, int[] gpus) {
            NodeFragmentation f = new NodeFragmentation(n, Fragmentation.shapes(c.profile(), d));
            return -(f.after(d, gpus) - f.now());
        }

        @Override public String defaultGpuPolicy() { return "fgd"; }

        @Override public boolean readsWorkloadProfile() { return true; }
    }
}
