package io.gpupool.store;

import java.util.List;
import java.util.Map;

/**
 * What a restarting service reads back: configuration, credentials, nodes, and the active jobs (PENDING
 * and RUNNING, in arrival order) with the grants of the running ones.
 *
 * @param progress     agent nodes' desired-state versions and acknowledged status seqs, by node
 * @param attemptStates running jobs' current attempt: node -> state of the attempt there
 * @param unfinishedAttempts queued jobs' attempts whose end no agent has reported yet (they may still run): job ->
 *                           node -> attempt
 * @param nextSeq      the first free job sequence number
 * @param nextEventId  the first free event id
 * @param idempotency  (tenant + '\n' + key) of every stored job that had one -> job id
 * @param openUsage    usage rows of grants not yet released (metering carries on from them)
 * @param arraysWithFailures job arrays with an active task and a task that ended other than SUCCEEDED
 * @param reservations the advance reservations (V11), in the order they were made
 */
public record RecoveredState(List<TenantRow> tenants, List<TokenRow> tokens, List<NodeRow> nodes,
                             Map<String, NodeProgress> progress, Map<String, String> settings, List<JobRow> activeJobs,
                             Map<String, List<GrantRow>> allocations, Map<String, Map<String, String>> attemptStates,
                             Map<String, Map<String, Integer>> unfinishedAttempts, Map<String, String> idempotency,
                             long nextSeq, long nextEventId, List<UsageGrantRow> openUsage, java.util.Set<String> arraysWithFailures,
                             List<ReservationRow> reservations) {
    public RecoveredState {
        arraysWithFailures = java.util.Set.copyOf(arraysWithFailures);
        reservations = List.copyOf(reservations);
    }
}
