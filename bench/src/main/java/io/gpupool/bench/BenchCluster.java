package io.gpupool.bench;

import io.gpupool.model.ClusterSpec;
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The heterogeneous pool the benchmarks run on: 8-GPU servers of five models in fixed proportions
 * (A100-80GB 30%, H100-80GB 25%, V100-32GB 20%, L40S 15%, T4 10%), built through the same SPEC parser
 * the command line uses.
 */
public final class BenchCluster {
    /** Model id and share of the nodes, in SPEC order. */
    static final String[] MODELS = {"A100-80GB", "H100-80GB", "V100-32GB", "L40S", "T4"};
    static final double[] SHARES = {0.30, 0.25, 0.20, 0.15, 0.10};

    private BenchCluster() {}

    /** The SPEC string for {@code nodes} 8-GPU nodes, e.g. {@code 1500x8:A100-80GB,1250x8:H100-80GB,...}. */
    public static String spec(int nodes) {
        if (nodes < MODELS.length) throw new IllegalArgumentException("need at least " + MODELS.length + " nodes, got " + nodes);
        List<String> groups = new ArrayList<>();
        int left = nodes;
        for (int i = 0; i < MODELS.length; i++) {
            int n = i == MODELS.length - 1 ? left : Math.max(1, (int) Math.round(nodes * SHARES[i]));
            left -= n;
            groups.add(String.format(Locale.ROOT, "%dx8:%s", n, MODELS[i]));
        }
        return String.join(",", groups);
    }

    public static ClusterSpec build(int nodes) {
        return ClusterSpecs.parse(spec(nodes), GpuCatalog.standard());
    }
}
