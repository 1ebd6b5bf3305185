package io.gpupool.engine.batch;

import io.gpupool.engine.placement.PlacementPipeline;
import io.gpupool.engine.placement.WorkloadProfile;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.model.JobSpec;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Batch mode: places the head of the queue together instead of one job at a time. When a scheduler has
 * one ({@code Scheduler.setBatchPlacer}), each round first asks it which of the first {@link #window()}
 * admissible pending jobs (in the policy's order) to start and where; those start, then the usual
 * one-by-one round runs over what is still pending. Implementations live outside the engine (the
 * optimize module) and are found by name through {@link BatchPlacers}.
 */
public interface BatchPlacer {
    /** The name a report shows, e.g. {@code cpsat}. */
    String name();

    /** Most jobs one call considers. */
    int window();

    /**
     * Which of the jobs to start now, and on which GPUs. The allocations must fit together on the cluster
     * as it is; the scheduler binds each one through {@link PlacementPipeline#placeGiven} (the engine's own
     * rules) and leaves out any that does not fit. The cluster must be left as found (use checkpoints).
     */
    Map<String, Allocation> plan(Batch batch);

    /**
     * What the last {@link #plan} could prove: no placement of that batch reaches more than this objective
     * (priority-weighted thousandths of a GPU; for jobs of priority 0, GPU demand in thousandths), or empty
     * when the placer proves nothing. Lets a study say how far an answer is from the optimum.
     */
    default java.util.OptionalLong lastBound() {
        return java.util.OptionalLong.empty();
    }

    /**
     * One round's batch: the cluster now, the pipeline whose filters and GPU rules apply, the workload mix
     * (for fragmentation-aware scoring), and the jobs in the policy's order. A re-pack
     * ({@code Scheduler.repack}) also gives the jobs every answer must place ({@code required}: running jobs
     * taken off their GPUs to be placed again) and a placement of them known to fit ({@code start}: where they
     * ran), which the placer starts from and returns when it finds nothing better; both are empty otherwise.
     */
    record Batch(ClusterState cluster, PlacementPipeline pipeline, WorkloadProfile profile, List<JobSpec> jobs,
                 Set<String> required, Map<String, Allocation> start) {
        public Batch {
            jobs = List.copyOf(jobs);
            required = Set.copyOf(required);
            start = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(start));
            if (!start.keySet().containsAll(required)) throw new IllegalArgumentException("the start placement must place every required job");
        }

        public Batch(ClusterState cluster, PlacementPipeline pipeline, WorkloadProfile profile, List<JobSpec> jobs) {
            this(cluster, pipeline, profile, jobs, Set.of(), Map.of());
        }
    }
}
