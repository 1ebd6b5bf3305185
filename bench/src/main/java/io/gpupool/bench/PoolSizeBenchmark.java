package io.gpupool.bench;

import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the engine benchmarks share: one thread's state, the pool sizes they are measured at (1,000 to 20,000
 * 8-GPU nodes: the growth with the node count is what docs/benchmarks.md reports), one fork with a fixed 2 GiB
 * heap, and the iterations (a subclass may annotate its own {@link Warmup} and {@link Measurement}).
 */
@State(Scope.Thread)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 4, time = 3)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public abstract class PoolSizeBenchmark {
    @Param({"1000", "5000", "20000"})
    public int nodes;
}
