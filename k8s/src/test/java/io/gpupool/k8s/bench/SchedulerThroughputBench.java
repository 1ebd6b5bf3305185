package io.gpupool.k8s.bench;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpupool.k8s.K8sConfig;
import io.gpupool.k8s.KubeFixtures;
import io.gpupool.k8s.MockApiServer;
import io.gpupool.k8s.scheduler.SecondaryScheduler;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Pods bound per second by the secondary scheduler on a mock cluster (fabric8's mock API server in CRUD
 * mode, on loopback). Skipped unless {@code -Dgpupool.k8s.bench=true}; see docs/benchmarks.md for the
 * command. Nodes and pods exist before the scheduler starts, so the figure is the scheduler's: list,
 * decide, write the decision annotations, bind, for every pod.
 */
class SchedulerThroughputBench {

    @Test
    void podsBoundPerSecond() throws Exception {
        assumeTrue(Boolean.getBoolean("gpupool.k8s.bench"), "set -Dgpupool.k8s.bench=true to run the bench");
        int nodes = Integer.getInteger("gpupool.k8s.bench.nodes", 1000);
        int pods = Integer.getInteger("gpupool.k8s.bench.pods", 3000);
        try (MockApiServer api = new MockApiServer(); ExecutorService pool = Executors.newFixedThreadPool(16)) {
            KubernetesClient client = api.client();
            long t0 = System.nanoTime();
            List<Future<?>> created = new ArrayList<>();
            for (int i = 0; i < nodes; i++) {
                var n = KubeFixtures.gfdNode(String.format("node-%04d", i), "NVIDIA-A100-SXM4-80GB", 8, 81920);
                created.add(pool.submit(() -> client.nodes().resource(n).create()));
            }
            Random rnd = new Random(42);
            for (int i = 0; i < pods; i++) {
                String ns = "team-" + (i % 4);
                String name = String.format("pod-%05d", i);
                // 30% shares of one GPU, the rest 1 or 2 whole GPUs
                Pod p = rnd.nextDouble() < 0.3 ? KubeFixtures.shared(ns, name, 4000 + 1000 * rnd.nextInt(16), 10 * (1 + rnd.nextInt(5)))
                        : KubeFixtures.wholeGpus(ns, name, rnd.nextDouble() < 0.7 ? 1 : 2);
                created.add(pool.submit(() -> client.pods().inNamespace(ns).resource(p).create()));
            }
            for (Future<?> f : created) f.get();
            double setupS = (System.nanoTime() - t0) / 1e9;

            var opts = SecondaryScheduler.Options.defaults("bench", "gpupool-system")
                    .withLeaderElection(false, Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(2));
            try (SecondaryScheduler s = new SecondaryScheduler(api.newClient(), K8sConfig.defaults().withPolicy("fcfs"), opts)) {
                long start = System.nanoTime();
                s.start();
                long firstBound = 0;
                while (s.bound() < pods) {
                    if (firstBound == 0 && s.bound() > 0) firstBound = System.nanoTime();
                    if (System.nanoTime() - start > 600e9) throw new AssertionError("not all pods bound in 10 minutes: " + s.bound());
                    Thread.sleep(5);
                }
                long end = System.nanoTime();
                double total = (end - start) / 1e9;
                double steady = (end - firstBound) / 1e9;
                String load = new String(java.nio.file.Files.readAllBytes(java.nio.file.Path.of("/proc/loadavg"))).trim();
                System.out.printf("k8s bench: %d nodes x 8 GPUs, %d pods (setup %.1f s)%n", nodes, pods, setupS);
                System.out.printf("  bound %d pods in %.2f s from start (list + decide + bind): %.0f pods/s%n", pods, total, pods / total);
                System.out.printf("  from the first binding on: %.2f s, %.0f pods/s%n", steady, pods / steady);
                System.out.printf("  engine and model (loop thread, busy): %.2f s = %.2f ms per pod%n", s.decideNanos() / 1e9, s.decideNanos() / 1e6 / pods);
                System.out.printf("  API writes (annotation update + Binding, summed over %d workers): %.2f s = %.2f ms per pod%n",
                        64, s.bindNanos() / 1e9, s.bindNanos() / 1e6 / pods);
                System.out.printf("  load average: %s%n", load);
                // what one request to this API server costs with the cluster loaded, one at a time
                String ns = "team-0", probe = "pod-00000";
                int n = 200;
                long g0 = System.nanoTime();
                for (int i = 0; i < n; i++) client.pods().inNamespace(ns).withName(probe).get();
                long g1 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    int k = i;
                    client.pods().inNamespace(ns).withName(probe).edit(x -> { x.getMetadata().getAnnotations().put("bench", Integer.toString(k)); return x; });
                }
                long g2 = System.nanoTime();
                System.out.printf("  mock API server, one request at a time: GET %.2f ms, read-modify-write %.2f ms%n", (g1 - g0) / 1e6 / n, (g2 - g1) / 1e6 / n);
            }
        }
    }
}
