package io.gpupool.server.core;

import io.gpupool.agent.protocol.AccountIsolation;
import io.gpupool.engine.placement.CycleState;
import io.gpupool.engine.placement.FilterPlugin;
import io.gpupool.engine.placement.ReplicaDemand;
import io.gpupool.engine.state.NodeState;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Status;

import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Keeps a job off nodes that would not run it as its Unix account (issue 14): a node whose agent runs every job as
 * its own account (not root), unless the job's tenant allows such nodes, and a node that lacks the job's account. The
 * service adds it to the engine only once some node needs it, so a pool of root agents pays nothing for it.
 */
final class AccountFilter implements FilterPlugin {
    private final Function<String, AccountIsolation> nodeAccounts;
    private final Function<String, String> accountOfJob;
    private final Predicate<String> tenantAllowsSharedAccount;

    /**
     * @param nodeAccounts              what a node's agent said of accounts (null: a node without an agent, or not said yet)
     * @param accountOfJob              a job's account by job id (null: none)
     * @param tenantAllowsSharedAccount whether a tenant's jobs may run where every job runs as the agent's account
     */
    AccountFilter(Function<String, AccountIsolation> nodeAccounts, Function<String, String> accountOfJob,
                  Predicate<String> tenantAllowsSharedAccount) {
        this.nodeAccounts = nodeAccounts;
        this.accountOfJob = accountOfJob;
        this.tenantAllowsSharedAccount = tenantAllowsSharedAccount;
    }

    static final String NAME = "accounts";

    @Override
    public String name() {
        return NAME;
    }

    /** Refusals are for now: an agent restarted as root, or an account created on the node, lifts them. */
    @Override
    public Status filter(CycleState cycle, ReplicaDemand demand, NodeState node) {
        AccountIsolation a = nodeAccounts.apply(node.name());
        if (a == null) return null;
        if (!a.switches()) {
            return tenantAllowsSharedAccount.test(cycle.job().tenant()) ? null
                    : Status.unschedulable(NAME, Resource.NONE, "runs every job as its agent's account (tenant does not allow that)");
        }
        if (a.missing().isEmpty()) return null;
        String account = accountOfJob.apply(cycle.job().id());
        return account != null && a.missing().contains(account) ? Status.unschedulable(NAME, Resource.NONE, "job's Unix account missing there") : null;
    }
}
