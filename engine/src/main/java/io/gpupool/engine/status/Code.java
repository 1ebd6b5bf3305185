package io.gpupool.engine.status;

/**
 * How final a refusal is (kube-scheduler's Unschedulable / UnschedulableAndUnresolvable / Error): a driver
 * decides from it whether to wait, give up, or report a fault.
 */
public enum Code {
    /** Not now: the job (or this replica on this node) may fit once capacity frees up or a rule allows it. */
    UNSCHEDULABLE,
    /** Never on this pool (or never on this node) as it is: waiting or preempting cannot help. */
    UNRESOLVABLE,
    /** The request or a given answer is inconsistent (a duplicate id, a placement naming GPUs that do not exist). */
    ERROR
}
