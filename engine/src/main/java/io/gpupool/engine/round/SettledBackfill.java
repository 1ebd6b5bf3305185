package io.gpupool.engine.round;

import io.gpupool.engine.JobState;
import io.gpupool.engine.policy.PolicyContext;
import io.gpupool.engine.status.Status;

import java.util.Collection;
import java.util.Comparator;

/**
 * A backfilling policy's round that would change nothing, known without walking it. After a full round that started
 * and preempted nothing, while only jobs arrive (the cluster at the same version, the same predictions), the head is
 * still blocked and gets the same reservation ({@link ReservationMemo}); each candidate behind it is refused again: one
 * refused on all GPUs is refused on fewer, and one refused outside the reserved GPUs stays so (its run only gets
 * later against the reserved time). Its reason stays the same too while no candidate that ended before the reserved
 * time stops doing so (tracked below). So when every arrival orders behind the last candidate the walk considered and
 * the walk had used up its backfill depth, the round starts nothing and every reason stands: only the head's is
 * renewed (its reserved time moves with a clamped reservation). For policies with a standing order (fcfs-backfill,
 * priority), whose order between old jobs does not change between rounds.
 */
final class SettledBackfill {
    private boolean valid;
    private JobState head;
    private Status headRefusal;
    private EasyReservation reservation;
    private JobState lastConsidered;      // the last candidate within the backfill depth
    private long reasonsHoldUntilMs;      // a candidate that ended before the reserved time stops doing so after this

    /** Forget: the next round walks in full. */
    void forget() {
        valid = false;
    }

    /** A full round ended with a reservation for {@code head}, the depth used up at {@code lastConsidered}; nothing started. */
    void remember(JobState head, Status headRefusal, EasyReservation reservation, JobState lastConsidered,
                  long reasonsHoldUntilMs) {
        this.valid = true;
        this.head = head;
        this.headRefusal = headRefusal;
        this.reservation = reservation;
        this.lastConsidered = lastConsidered;
        this.reasonsHoldUntilMs = reasonsHoldUntilMs;
    }

    /**
     * Whether this round, with only {@code arrivals} since the remembered one (the caller checks that nothing else
     * changed, the cluster included), would change nothing; if so the head's reason is renewed. {@code memo} gives the
     * reservation this round would make, and none when the predictions may have changed.
     */
    boolean holds(PolicyContext ctx, Collection<JobState> arrivals, Comparator<JobState> order, ReservationMemo memo, RoundJobs jobs) {
        if (!valid || ctx.nowMs() > reasonsHoldUntilMs) return false;
        for (JobState a : arrivals) if (order.compare(a, lastConsidered) <= 0) return false;
        ReservationMemo.Reuse again = memo.reuse(ctx, head);
        if (again == null || again.reservation() == null || again.reservation().gpus() != reservation.gpus()) return false;
        jobs.waits(head, Dispatch.reserved(headRefusal, again.reservation()));
        return true;
    }
}
