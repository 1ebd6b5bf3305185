package io.gpupool.store;

import java.util.List;

/**
 * One change to the store. Writes are applied by {@link GroupCommitWriter} in the order they were handed
 * in, many to a transaction. Every job-level write is absolute (the full new state, the full allocation),
 * so within one batch only the last write per job and kind matters.
 */
public sealed interface Write {
    record InsertJob(JobRow job) implements Write {}

    /** The job's new state; the row must exist (inserted earlier, possibly in the same batch). */
    record UpdateJob(JobRow job) implements Write {}

    /** Replaces what the job holds; an empty list releases everything. */
    record SetAllocation(String jobId, List<GrantRow> grants) implements Write {
        public SetAllocation {
            grants = List.copyOf(grants);
        }
    }

    /** The job's new spec (a hold, an edit of a pending job); the row must exist. */
    record UpdateSpec(String jobId, String spec) implements Write {}

    record InsertEvent(EventRow event) implements Write {}

    /** A new attempt of a job on one node (written with the start that made it). */
    record InsertAttempt(AttemptRow attempt) implements Write {}

    /** What an agent reported about an attempt, or the server closing it; the row must exist. */
    record UpdateAttempt(AttemptUpdate update) implements Write {}

    /** More output of an attempt's stream, following what is stored. */
    record AppendOutput(OutputChunk chunk) implements Write {}

    /** An agent node's desired-state version and acknowledged status seq (only the last per node in a batch counts). */
    record PutNodeProgress(NodeProgress progress) implements Write {}

    record PutTenant(TenantRow tenant) implements Write {}

    record PutToken(TokenRow token) implements Write {}

    /** Revokes a token (a node's credential, replaced when its agent registers again). */
    record DeleteToken(String id) implements Write {}

    record PutNode(NodeRow node) implements Write {}

    record PutSetting(String name, String value) implements Write {}

    /** A new advance reservation. */
    record PutReservation(ReservationRow reservation) implements Write {}

    /** An advance reservation deleted, or whose window ended. */
    record DeleteReservation(String name) implements Write {}

    /** What a GPU grant of an attempt held and used so far (only the last per grant in a batch counts). */
    record PutUsage(UsageGrantRow usage) implements Write {}

    /** A job reached a final state (usage accounting). */
    record PutJobEnd(JobEndRow end) implements Write {}

    /** Replaces the saved run-time predictor of its kind. */
    record PutPredictor(PredictorRow predictor) implements Write {}
}
