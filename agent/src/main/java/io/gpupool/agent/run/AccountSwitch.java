package io.gpupool.agent.run;

import io.gpupool.agent.protocol.JobLaunch;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which Unix account a job's command runs as (issue 14). Only a root agent can switch accounts, and only with a
 * wrapper that can ({@link JobWrapper#cannotSwitchReason}); the switch itself is the wrapper's. Accounts are looked up
 * through the C library's name service (passwd and the account's groups), kept for 30 s.
 */
public final class AccountSwitch {
    /** How often an account found missing is looked up again, so that one an admin adds is taken up by itself. */
    static final long RECHECK_NANOS = 30_000_000_000L;
    private final long recheckNanos;
    /** Why the wrapper cannot switch; null where it can. */
    private final String cannotSwitch;
    /** Accounts found, and when (System.nanoTime): a job start spawns no getent for an account seen within the recheck time. */
    private final Map<String, Found> found = new ConcurrentHashMap<>();

    private record Found(UnixAccount account, List<Integer> groups, long atNanos) {}

    /** Accounts jobs asked for that this node lacks, and when each was last looked up (System.nanoTime). */
    private final Map<String, Long> missing = new ConcurrentHashMap<>();
    private final boolean root;
    private final String unboundAccount;
    private final boolean allowRoot;

    /** What a launch runs as. */
    public sealed interface Plan {
        /** The agent's own account: it is not root (it cannot switch), or no account was asked and none is set. */
        record AsAgent() implements Plan {}

        /** As {@code account}, with its supplementary groups (numeric, the primary one among them). */
        record Switch(UnixAccount account, List<Integer> groups) implements Plan {}

        /** It must not run here; {@code missingAccount} names an account this node lacks (null for other reasons). */
        record Refuse(String reason, String missingAccount) implements Plan {}
    }

    /**
     * @param cannotSwitch   why the job wrapper cannot switch accounts; null where it can
     * @param unboundAccount the account of jobs that name none, on a root agent. The {@code gpupool agent} command
     *                       always sets one (nobody by default); null, for agents embedded in tests, keeps the
     *                       agent's own account
     * @param allowRoot      whether a job may run with uid 0 (under any name)
     */
    public AccountSwitch(String cannotSwitch, String unboundAccount, boolean allowRoot) {
        this(UnixAccount.effectiveUid() == 0, cannotSwitch, unboundAccount, allowRoot, RECHECK_NANOS);
    }

    AccountSwitch(boolean root, String cannotSwitch, String unboundAccount, boolean allowRoot, long recheckNanos) {
        this.recheckNanos = recheckNanos;
        this.root = root;
        this.cannotSwitch = cannotSwitch;
        this.unboundAccount = unboundAccount;
        this.allowRoot = allowRoot;
    }

    /** Whether this agent runs jobs as their own accounts (it is root and its wrapper can switch). */
    public boolean switchesAccounts() {
        return root && cannotSwitch == null;
    }

    /** Why it does not, for the agent's start message and its node's isolation level; null when it does. */
    public String whyNot() {
        if (!root) return "the agent is not root: every job runs as the agent's own account";
        if (cannotSwitch != null) return cannotSwitch + ": every job runs as the agent's own account";
        return null;
    }

    public Plan plan(JobLaunch launch) {
        String name = launch.runAs() != null ? launch.runAs() : unboundAccount;
        if (name == null || !switchesAccounts()) return new Plan.AsAgent();
        Optional<Found> account;
        try {
            account = lookup(name);
        } catch (IOException e) {
            return new Plan.Refuse("cannot look up account '" + name + "': " + e.getMessage(), null);
        }
        if (account.isEmpty()) {
            missing.put(name, System.nanoTime());
            return new Plan.Refuse("account '" + name + "' does not exist on this node", name);
        }
        missing.remove(name);
        if (account.get().account().uid() == 0 && !allowRoot) {
            return new Plan.Refuse("jobs never run as root: account '" + name + "' has uid 0 (an agent started with --allow-root-jobs allows it)", null);
        }
        return new Plan.Switch(account.get().account(), account.get().groups());
    }

    /** The account called {@code name} and its groups, looked up again once its last look-up is older than the recheck time. */
    private Optional<Found> lookup(String name) throws IOException {
        long now = System.nanoTime();
        Found f = found.get(name);
        if (f != null && now - f.atNanos() < recheckNanos) return Optional.of(f);
        Optional<UnixAccount> a = UnixAccount.lookup(name);
        if (a.isEmpty()) {
            found.remove(name);
            return Optional.empty();
        }
        Found fresh = new Found(a.get(), a.get().groups(), now);
        found.put(name, fresh);
        return Optional.of(fresh);
    }

    /**
     * The accounts jobs asked for that this node does not have, in name order. Each is looked up again when its last
     * look-up is older than 30 s; one that exists now leaves the list.
     */
    public List<String> missingAccounts() {
        long now = System.nanoTime();
        for (Map.Entry<String, Long> e : List.copyOf(missing.entrySet())) {
            if (now - e.getValue() < recheckNanos) continue;
            try {
                if (UnixAccount.lookup(e.getKey()).isPresent()) missing.remove(e.getKey());
                else missing.put(e.getKey(), now);
            } catch (IOException ex) {
                // the name service is down: keep the account listed and ask again next time
            }
        }
        return missing.keySet().stream().sorted().toList();
    }
}
