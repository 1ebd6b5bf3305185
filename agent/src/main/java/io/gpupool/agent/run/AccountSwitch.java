package io.gpupool.agent.run;

import io.gpupool.agent.protocol.JobLaunch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Runs a job's command as its Unix account (issue 14). Only a root agent can switch accounts; it does so with
 * util-linux's {@code setpriv} right before the command: the wrapper shell and its control files stay root's,
 * the command and all it forks get the account's uid, primary gid, supplementary groups and HOME, and no
 * capabilities (an empty bounding set, so not even a setuid binary regains them).
 *
 * <p>Nothing the job asked for reaches a process that runs as root: the job's environment (which could hold
 * LD_PRELOAD) is applied by {@code env -i} after the switch, and the job's directory is entered by {@code env -C}
 * (GNU coreutils 8.28 and newer; elsewhere by a shell) that already runs as the account, so a directory the account
 * may not enter stays closed to it. So a job costs two execs of its own besides the command (setpriv, env).
 */
public final class AccountSwitch {
    private static final List<String> SETPRIV_PATHS = List.of("/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv");
    private static final String ENV = "/usr/bin/env";
    /** Where env lacks -C: $1 the directory, the rest the command; enter it as the account, then become the command. */
    private static final String ENTER = "cd -- \"$1\" || exit 126; shift; exec \"$@\"";

    /** How often an account found missing is looked up again, so that one an admin adds is taken up by itself. */
    static final long RECHECK_NANOS = 30_000_000_000L;
    private final long recheckNanos;
    private final String setpriv;
    /** Accounts found, and when (System.nanoTime): a job start spawns no getent for an account seen within the recheck time. */
    private final Map<String, Found> found = new ConcurrentHashMap<>();

    private record Found(UnixAccount account, long atNanos) {}

    /** Accounts jobs asked for that this node lacks, and when each was last looked up (System.nanoTime). */
    private final Map<String, Long> missing = new ConcurrentHashMap<>();
    private final boolean root;
    /** Whether {@code env -C DIR} enters the directory (else a shell after env does, one exec more per job). */
    private final boolean envChdir;
    private final String unboundAccount;
    private final boolean allowRoot;

    /** What a launch runs as. */
    public sealed interface Plan {
        /** The agent's own account: it is not root (it cannot switch), or no account was asked and none is set. */
        record AsAgent() implements Plan {}

        record Switch(UnixAccount account) implements Plan {}

        /** It must not run here; {@code missingAccount} names an account this node lacks (null for other reasons). */
        record Refuse(String reason, String missingAccount) implements Plan {}
    }

    /**
     * @param unboundAccount the account of jobs that name none, on a root agent. The {@code gpupool agent} command
     *                       always sets one (nobody by default); null, for agents embedded in tests, keeps the
     *                       agent's own account
     * @param allowRoot      whether a job may run with uid 0 (under any name)
     */
    public AccountSwitch(String unboundAccount, boolean allowRoot) {
        this(UnixAccount.effectiveUid() == 0, SETPRIV_PATHS.stream().filter(p -> Files.isExecutable(Path.of(p))).findFirst().orElse(null),
                unboundAccount, allowRoot, RECHECK_NANOS);
    }

    AccountSwitch(boolean root, String setpriv, String unboundAccount, boolean allowRoot, long recheckNanos) {
        this(root, setpriv, unboundAccount, allowRoot, recheckNanos, root && setpriv != null && envEntersDirectories());
    }

    AccountSwitch(boolean root, String setpriv, String unboundAccount, boolean allowRoot, long recheckNanos, boolean envChdir) {
        this.envChdir = envChdir;
        this.recheckNanos = recheckNanos;
        this.root = root;
        this.setpriv = setpriv;
        this.unboundAccount = unboundAccount;
        this.allowRoot = allowRoot;
    }

    /** Whether this agent runs jobs as their own accounts (it is root and has setpriv). */
    public boolean switchesAccounts() {
        return root && setpriv != null;
    }

    /** Why it does not, for the agent's start message and its node's isolation level; null when it does. */
    public String whyNot() {
        if (!root) return "the agent is not root: every job runs as the agent's own account";
        if (setpriv == null) return "setpriv (util-linux) is missing: every job runs as the agent's own account";
        return null;
    }

    public Plan plan(JobLaunch launch) {
        String name = launch.runAs() != null ? launch.runAs() : unboundAccount;
        if (name == null || !switchesAccounts()) return new Plan.AsAgent();
        Optional<UnixAccount> account;
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
        if (account.get().uid() == 0 && !allowRoot) {
            return new Plan.Refuse("jobs never run as root: account '" + name + "' has uid 0 (an agent started with --allow-root-jobs allows it)", null);
        }
        return new Plan.Switch(account.get());
    }

    /** The account called {@code name}, looked up again once its last look-up is older than the recheck time. */
    private Optional<UnixAccount> lookup(String name) throws IOException {
        long now = System.nanoTime();
        Found f = found.get(name);
        if (f != null && now - f.atNanos() < recheckNanos) return Optional.of(f.account());
        Optional<UnixAccount> a = UnixAccount.lookup(name);
        if (a.isPresent()) found.put(name, new Found(a.get(), now));
        else found.remove(name);
        return a;
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

    /** The command line that runs {@code command} as the account, in {@code dir}, with exactly {@code env}. */
    public List<String> commandAs(UnixAccount a, Map<String, String> env, Path dir, List<String> command) {
        List<String> cmd = new ArrayList<>(List.of(setpriv, "--reuid=" + a.uid(), "--regid=" + a.gid(), "--init-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--", ENV, "-i"));
        if (envChdir) cmd.addAll(List.of("-C", dir.toString())); // a directory it cannot enter: env exits 125
        env.forEach((k, v) -> cmd.add(k + "=" + v));
        if (!envChdir) cmd.addAll(List.of("/bin/sh", "-c", ENTER, "gpupool-enter", dir.toString()));
        cmd.addAll(command);
        return cmd;
    }

    /** Whether this node's env has {@code -C} (GNU coreutils 8.28 and newer): asked once, by running it. */
    private static boolean envEntersDirectories() {
        try {
            Process p = new ProcessBuilder(ENV, "-i", "-C", "/", "/bin/sh", "-c", ":").redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (p.waitFor(10, TimeUnit.SECONDS)) return p.exitValue() == 0;
            p.destroyForcibly();
            return false;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
