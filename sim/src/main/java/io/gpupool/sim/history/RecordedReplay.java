package io.gpupool.sim.history;

import io.gpupool.engine.Scheduler;
import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.SubmitResult;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.state.Allocation;
import io.gpupool.engine.state.GpuGrant;
import io.gpupool.engine.state.NodeState;
import io.gpupool.model.ClusterSpec;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;
import io.gpupool.sim.metrics.JobOutcome;
import io.gpupool.sim.metrics.SimulationRecorder;
import io.gpupool.sim.metrics.SimulationResult;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * The four goals of what really happened: the recorded history played back, every run at its recorded time on its
 * recorded GPUs, into the same {@link SimulationRecorder} that measures a replay, so the recorded row and the policies'
 * rows are computed by the same code. The jobs' GPUs are put back through the engine ({@link Scheduler#restoreRunning},
 * as a restarted service does), so utilization and fragmentation are measured on the same pool state a replay has;
 * no policy decides anything here.
 *
 * <p>Per instant, as in a replay: run ends first, then submissions (in submit order), then run starts. A run that is
 * not a job's last is a preemption in the figures (the job waits again until its next run).
 */
public final class RecordedReplay {
    /** In the order of one instant; a run that ends the instant it starts ends after its start. */
    private enum Kind { END, SUBMIT, START, END_AT_START }

    private record Event(long atMs, Kind kind, int job, int run) {}

    private RecordedReplay() {}

    /**
     * @param label shown as the policy of the row, e.g. {@code recorded (fair-share)}
     * @throws SpecException when a run's GPUs are not in this pool, or two runs hold a GPU beyond what it can give
     */
    public static SimulationResult replay(ClusterSpec cluster, SchedulerConfig config, List<RecordedJob> jobs, String label, String traceLabel,
                                          long fairnessWindowMs) {
        Scheduler engine = new Scheduler(cluster, config.withPolicy("fcfs"));   // no round runs: the policy never decides
        SimulationRecorder rec = new SimulationRecorder(engine.cluster(), config.tenants(), fairnessWindowMs);
        List<Event> events = new ArrayList<>();
        for (int j = 0; j < jobs.size(); j++) {
            RecordedJob r = jobs.get(j);
            events.add(new Event(r.spec().submitTimeMs(), Kind.SUBMIT, j, -1));
            for (int k = 0; k < r.runs().size(); k++) {
                events.add(new Event(r.runs().get(k).startMs(), Kind.START, j, k));
                RecordedJob.Run run = r.runs().get(k);
                events.add(new Event(run.endMs(), run.heldMs() == 0 ? Kind.END_AT_START : Kind.END, j, k));
            }
        }
        // stable: equal instants and kinds keep the jobs' order (submit order)
        events.sort(Comparator.comparingLong(Event::atMs).thenComparing(Event::kind));
        int[][] nodes = new int[jobs.size()][];
        long preemptions = 0;
        for (int i = 0; i < events.size(); ) {
            long now = events.get(i).atMs();
            rec.advanceTo(now);
            for (; i < events.size() && events.get(i).atMs() == now; i++) {
                Event e = events.get(i);
                RecordedJob r = jobs.get(e.job());
                JobSpec s = r.spec();
                switch (e.kind()) {
                    case SUBMIT -> rec.submitted(s);
                    case START -> {
                        Allocation a = allocation(engine, s, r.runs().get(e.run()), e.run());
                        SubmitResult back = engine.restoreRunning(s, a, now, now);
                        if (!back.accepted()) throw new SpecException("job " + s.id(), "recorded_runs", "run " + (e.run() + 1) + ": " + back.reason());
                        nodes[e.job()] = a.replicaNodes().stream().mapToInt(Integer::intValue).toArray();
                        rec.started(s, nodes[e.job()]);
                    }
                    case END, END_AT_START -> {
                        boolean last = e.run() == r.runs().size() - 1;
                        if (last) {
                            engine.complete(s.id(), now);
                            rec.completed(s, new JobOutcome(s.id(), s.tenant(), s.submitTimeMs(), r.firstStartMs(), r.endMs(), r.job().durationMs(),
                                    s.gpuMilliDemand() / 1000.0, r.waitMs(), r.runs().size() - 1, r.timedOut()), nodes[e.job()]);
                        } else {
                            engine.cancel(s.id(), now);
                            rec.preempted(s, nodes[e.job()]);
                            preemptions++;
                        }
                        engine.forget(s.id());
                    }
                }
            }
            rec.instantDone();
        }
        return rec.finish(label, config.placement().label(), traceLabel, 0, Map.of(), preemptions, 0);
    }

    /** The run's GPUs as the engine's grants: each node's GPUs cut into replicas of the job's size, shares as the engine grants them. */
    private static Allocation allocation(Scheduler engine, JobSpec s, RecordedJob.Run run, int index) {
        ReplicaDemand demand = ReplicaDemand.of(s);
        int per = s.shape().gpusPerReplica();
        List<List<GpuGrant>> replicas = new ArrayList<>();
        for (RecordedJob.NodeGpus n : run.gpus()) {
            Integer id = engine.cluster().nodeId(n.node());
            if (id == null) {
                throw new SpecException("job " + s.id(), "recorded_runs", "run " + (index + 1) + " ran on node '" + n.node()
                        + "', which this pool does not have (replay on the pool the history was recorded on)");
            }
            NodeState node = engine.cluster().node(id);
            if (n.gpus().size() % per != 0) {
                throw new SpecException("job " + s.id(), "recorded_runs", "run " + (index + 1) + " holds " + n.gpus().size() + " GPUs on node '" + n.node()
                        + "', not a whole number of replicas of " + per);
            }
            for (int from = 0; from < n.gpus().size(); from += per) {
                List<GpuGrant> grants = new ArrayList<>();
                for (int g : n.gpus().subList(from, from + per)) {
                    if (g >= node.gpuCount()) {
                        throw new SpecException("job " + s.id(), "recorded_runs", "run " + (index + 1) + " ran on GPU " + g + " of node '" + n.node()
                                + "', which has " + node.gpuCount() + " GPUs");
                    }
                    grants.add(new GpuGrant(id, g, demand.exclusive() ? 1000 : demand.milli(), demand.memoryOn(node.model(), node.memoryCapacityMib()),
                            demand.exclusive()));
                }
                replicas.add(grants);
            }
        }
        return new Allocation(s.id(), replicas, s.host());
    }
}
