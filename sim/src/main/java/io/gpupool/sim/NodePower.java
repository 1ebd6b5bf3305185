package io.gpupool.sim;

import io.gpupool.engine.JobState;
import io.gpupool.engine.Scheduler;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.state.ClusterState;
import io.gpupool.engine.state.NodeState;
import io.gpupool.engine.status.Status;
import io.gpupool.model.JobSpec;
import io.gpupool.sim.energy.PowerDown;
import io.gpupool.sim.metrics.PowerMeter;

import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Node power-down in a replay ({@link PowerDown}): which nodes are on, off or waking up. A node that is off or waking is
 * cordoned in the engine, so no placement ever lands on it; it is uncordoned when its wake-up ends.
 *
 * <p>After each round ({@link #afterRound}), the queued jobs are looked at in the order they entered the queue: a job that
 * is not held, not over its tenant's limit and not refused by the policy's admission, and that the engine cannot place
 * on the powered-on nodes as they are now (a dry run of the placement pipeline), <em>needs</em> nodes. Each such job
 * takes, replica by replica, room on nodes already waking up (first) or wakes the first powered-off nodes that can hold
 * a replica (an allowed GPU model, enough GPUs and host resources for one replica on the empty node), as few as that
 * takes: a job the waking nodes cannot hold in full waits for running jobs too. Only when no job needs nodes does a
 * node idle for the delay power off: a node is never powered down while a job runs on it, nor while the queue holds
 * jobs the powered-on nodes cannot take.
 */
final class NodePower {
    private enum State { ON, OFF, WAKING }

    private final Scheduler scheduler;
    private final ClusterState cluster;
    private final PowerDown params;
    private final PowerMeter meter;
    private final State[] state;
    private final long[] idleSinceMs;     // ON nodes: since when no job uses it (-1: in use)
    private final long[] readyAtMs;       // WAKING nodes: when it takes work
    private int off, waking;
    private int roomLeft;                 // during a walk: the sum of room[] (GPUs of waking nodes not spoken for)

    NodePower(Scheduler scheduler, PowerDown params, PowerMeter meter) {
        this.scheduler = scheduler;
        this.cluster = scheduler.cluster();
        this.params = params;
        this.meter = meter;
        int n = cluster.nodeCount();
        this.state = new State[n];
        Arrays.fill(state, State.ON);
        this.idleSinceMs = new long[n];
        Arrays.fill(idleSinceMs, -1);
        this.readyAtMs = new long[n];
        meter.offWattsPerNode(params.offWatts());
    }

    /** Some node is waking up: the replay must go on until it is up. */
    boolean waking() {
        return waking > 0;
    }

    /** The next instant at which a node powers off or finishes waking, after {@code nowMs}; MAX_VALUE when none. */
    long nextEventMs(long nowMs) {
        long next = Long.MAX_VALUE;
        for (int i = 0; i < state.length; i++) {
            if (state[i] == State.WAKING) {
                next = Math.min(next, readyAtMs[i]);   // never before now; now itself with no wake latency
            } else if (state[i] == State.ON && i >= params.keep() && idleSinceMs[i] >= 0) {
                long t = idleSinceMs[i] + params.idleMs();
                // a node kept on past its delay (jobs needed nodes) is looked at again at the next instant of any kind
                if (t > nowMs) next = Math.min(next, t);
            }
        }
        return next;
    }

    /** Before the round: nodes whose wake-up has ended take work from now. */
    void beforeRound(long nowMs) {
        if (waking == 0) return;
        for (int i = 0; i < state.length; i++) {
            if (state[i] == State.WAKING && readyAtMs[i] <= nowMs) {
                state[i] = State.ON;
                waking--;
                idleSinceMs[i] = -1;   // set after the round if the round gives it nothing
                scheduler.setCordoned(cluster.node(i).name(), false);
            }
        }
    }

    /** After the round: idle times, then wake-ups for the jobs that need nodes, or else power-offs. */
    void afterRound(long nowMs) {
        int busy = 0;
        boolean dueToPowerOff = false;
        for (int i = 0; i < state.length; i++) {
            if (state[i] != State.ON) continue;
            if (inUse(cluster.node(i))) {
                idleSinceMs[i] = -1;
                busy++;
            } else {
                if (idleSinceMs[i] < 0) idleSinceMs[i] = nowMs;
                dueToPowerOff |= i >= params.keep() && idleSinceMs[i] + params.idleMs() <= nowMs;
            }
        }
        meter.busyNodes(busy);
        Set<String> waitingForWake = new LinkedHashSet<>();
        boolean needNodes = (off > 0 || waking > 0 || dueToPowerOff) && wakeFor(nowMs, waitingForWake);
        meter.waitingForWake(waitingForWake);
        if (!needNodes && dueToPowerOff) powerOff(nowMs);
    }

    /**
     * Walks the queue: wakes nodes for the jobs the powered-on nodes cannot take, and collects the jobs now waiting only
     * for nodes that are waking up. True when some job needs nodes.
     */
    private boolean wakeFor(long nowMs, Set<String> waitingForWake) {
        int n = state.length;
        int[] room = new int[n];              // GPUs of a waking node not yet spoken for in this walk
        roomLeft = 0;
        for (int i = 0; i < n; i++) {
            if (state[i] == State.WAKING) {
                room[i] = cluster.node(i).gpuCount();
                roomLeft += room[i];
            }
        }
        Map<String, Boolean> fitsOnNodesOn = new HashMap<>();
        boolean need = false;
        for (JobState job : scheduler.pendingJobs()) {
            if (job.holdReason() != null || blockedByRules(job)) continue;
            boolean fits = fitsOnNodesOn.computeIfAbsent(job.shapeKey(), k -> dryRunFits(job.spec()));
            if (fits) continue;
            need = true;
            if (off == 0 && roomLeft == 0) break;   // nothing left to wake or to wait for: the rest wait for running jobs
            if (takeRoom(job.spec(), room, nowMs)) waitingForWake.add(job.id());
        }
        return need;
    }

    /** Held back by its tenant's limit or the policy's admission: more nodes would not start it. */
    private static boolean blockedByRules(JobState job) {
        Status s = job.waitStatus();
        return s != null && (s.plugin().equals(Status.QUOTA) || s.plugin().equals(Status.ADMISSION));
    }

    private boolean dryRunFits(JobSpec job) {
        return scheduler.pipeline().place(new CycleState(cluster, job, scheduler.workloadProfile(), null), false).ok();
    }

    /** Places each replica on a waking node's room, else wakes the first powered-off node that holds one; true when all fit. */
    private boolean takeRoom(JobSpec job, int[] room, long nowMs) {
        int k = Math.max(1, job.shape().gpusPerReplica());   // a shared GPU counts as a whole one here
        for (int r = 0; r < job.shape().replicas(); r++) {
            int node = -1;
            for (int i = 0; i < state.length && node < 0; i++) {
                if (state[i] == State.WAKING && room[i] >= k && holdsReplica(i, job, k)) node = i;
            }
            for (int i = 0; i < state.length && node < 0; i++) {
                if (state[i] == State.OFF && holdsReplica(i, job, k)) {
                    wake(i, nowMs);
                    room[i] = cluster.node(i).gpuCount();
                    roomLeft += room[i];
                    node = i;
                }
            }
            if (node < 0) return false;
            room[node] -= k;
            roomLeft -= k;
        }
        return true;
    }

    /** One replica on this node when it is empty: an allowed model, enough GPUs and host resources. */
    private boolean holdsReplica(int i, JobSpec job, int gpus) {
        NodeState n = cluster.node(i);
        return job.allows(n.model()) && n.gpuCount() >= gpus
                && n.spec().cpuMilli() >= job.host().cpuMilli() && n.spec().memoryMib() >= job.host().memoryMib();
    }

    private void wake(int i, long nowMs) {
        state[i] = State.WAKING;
        off--;
        waking++;
        readyAtMs[i] = nowMs + params.wakeMs();
        meter.asleep(i, false);
    }

    private void powerOff(long nowMs) {
        for (int i = params.keep(); i < state.length; i++) {
            if (state[i] != State.ON || idleSinceMs[i] < 0 || idleSinceMs[i] + params.idleMs() > nowMs) continue;
            NodeState n = cluster.node(i);
            if (inUse(n)) throw new IllegalStateException("node " + n.name() + " would power down while a job runs on it");
            state[i] = State.OFF;
            off++;
            idleSinceMs[i] = -1;
            scheduler.setCordoned(n.name(), true);
            meter.asleep(i, true);
        }
    }

    /** Some job holds a share of a GPU, or host CPU or memory, on the node. */
    private static boolean inUse(NodeState n) {
        if (n.usedMilli() > 0 || n.freeCpuMilli() < n.spec().cpuMilli() || n.freeHostMemoryMib() < n.spec().memoryMib()) return true;
        for (int g = 0; g < n.gpuCount(); g++) if (n.tasks(g) > 0) return true;
        return false;
    }
}
