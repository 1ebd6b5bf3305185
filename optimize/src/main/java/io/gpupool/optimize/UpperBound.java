package io.gpupool.optimize;

import io.gpupool.engine.state.NodeState;

import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.IntStream;

/**
 * A quick upper bound on the value any placement reaches, for solvers that prove none: the fractional
 * knapsack over all free compute (every schedulable GPU's free share pooled into one bin, jobs split at
 * will, highest weight first). Every real placement uses at most that compute, so it can do no better.
 */
final class UpperBound {
    private UpperBound() {}

    static long of(BatchProblem p) {
        long capacity = 0;
        for (NodeState n : p.cluster().nodes()) if (!n.cordoned()) capacity += n.freeMilliTotal();
        Integer[] byWeight = IntStream.range(0, p.size()).boxed().toArray(Integer[]::new);
        Arrays.sort(byWeight, Comparator.comparingLong(j -> -BatchProblem.weightOf(p.job(j).priority())));
        long bound = 0;
        for (int j : byWeight) {
            long demand = p.job(j).gpuMilliDemand();
            long take = Math.min(demand, capacity);
            bound += BatchProblem.weightOf(p.job(j).priority()) * take;
            capacity -= take;
            if (capacity == 0) break;
        }
        return bound;
    }
}
