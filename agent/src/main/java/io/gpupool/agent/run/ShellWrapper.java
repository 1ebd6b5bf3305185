package io.gpupool.agent.run;

import io.gpupool.agent.confine.AttemptCgroup;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * The wrapper as a shell script ({@code sh -c WRAPPER gpupool-job JOBDIR COMMAND...}), where the native wrapper is
 * not there. It switches accounts with util-linux's {@code setpriv} right before the command: the shell and its
 * control files stay root's, the command and all it forks get the account's uid, primary gid, supplementary groups and
 * HOME, and no capabilities (an empty bounding set, so not even a setuid binary regains them). Then a shell that
 * already runs as the account ({@link #ACCOUNT_SIDE}) reads the job's environment from stdin, enters the job's
 * directory and becomes the command: the environment (which could hold LD_PRELOAD) reaches nothing that runs as root,
 * and no command line (which every account can read) carries it. So a job under an account costs three execs besides
 * the command (sh, setpriv, sh).
 *
 * @param setpriv the setpriv program; null where there is none (jobs cannot switch accounts)
 * @param why     why the shell wrapper is used (for the start message)
 */
record ShellWrapper(String setpriv, String why) implements JobWrapper {

    /**
     * The wrapper's first step where the attempt has cgroups: it writes its own pid into each group's cgroup.procs
     * (from the job directory's record, "HIERARCHY CONTROLLERS DIR" per line) before the command starts, so every
     * process of the job starts inside. It runs as the agent's user (root): the job's own identity, if any, applies to
     * the command only. A group it cannot join stops the job before the command runs (exit 125, the group in
     * {@code unconfined}).
     */
    static final String JOIN_CGROUPS = "if [ -f \"$d/" + AttemptCgroup.RECORD + "\" ]; then while read h c g; do "
            + "echo $$ > \"$g/cgroup.procs\" || { echo \"$g\" > \"$d/" + UNCONFINED + "\"; exit 125; }; done < \"$d/" + AttemptCgroup.RECORD + "\"; fi; ";

    /**
     * The wrapper: $1 is the job directory, the rest the command. "trap : TERM INT HUP" makes the shell wait
     * for the command on a stop (a trapped signal runs only after the foreground command ends) while the
     * command itself gets the default handling, so the exit code still gets written. Only builtins besides
     * the command. The exit code is a line; a write cut short (the shell killed mid-write) leaves no newline and is
     * not taken.
     */
    static final String WRAPPER = "d=$1; shift; echo $$ > \"$d/pid\"; " + JOIN_CGROUPS + "trap : TERM INT HUP; \"$@\"; rc=$?; "
            + "echo $rc > \"$d/exit\"; exit $rc";

    /** The search path of the root-run steps before a job's account takes over. */
    static final String ROOT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    private static final List<String> SETPRIV_PATHS = List.of("/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv");
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /**
     * The account's side: $1 a line that ends the environment, $2 the directory, the rest the command. It starts with
     * the root side's PATH only (dropped) and reads "export NAME='VALUE'" lines up to the end line (none: the stream was
     * cut, exit 125), takes /dev/null as stdin, enters the directory (exit 125 where the account may not), and runs the
     * command with exactly the job's environment (a shell's own PWD and OLDPWD removed, as {@code env -i} gives it).
     * Its own variables stay unexported; it applies the environment last, so no job variable changes what it does.
     */
    static final String ACCOUNT_SIDE = "m=$1; d=$2; shift 2; unset PATH PWD OLDPWD; s=; e=1; "
            + "while IFS= read -r l; do if [ \"$l\" = \"$m\" ]; then e=; break; fi; s=\"$s$l\n\"; done; "
            + "[ -z \"$e\" ] || { echo \"gpupool-job: the job's environment was cut short\" >&2; exit 125; }; "
            + "exec 0</dev/null; cd -- \"$d\" 2>/dev/null || { if [ -d \"$d\" ]; then r='Permission denied'; else r='No such directory'; fi; "
            + "echo \"gpupool-job: cannot enter $d: $r\" >&2; exit 125; }; unset PWD OLDPWD; eval \"$s\"; exec \"$@\"";

    /** This machine's setpriv. */
    static ShellWrapper onThisMachine(String why) {
        return new ShellWrapper(SETPRIV_PATHS.stream().filter(p -> Files.isExecutable(Path.of(p))).findFirst().orElse(null), why);
    }

    @Override
    public Call asAgent(JobDirectory dir, List<String> command, Map<String, String> env, Path workDir) {
        return new Call(commandLine(dir, command), env, workDir, null);
    }

    @Override
    public Call asAccount(JobDirectory dir, List<String> command, Map<String, String> env, Path enterDir, boolean makeWorkDir,
                          UnixAccount account, List<Integer> groups) throws IOException {
        dir.handOver(account, makeWorkDir);
        // a value holding this line would only cut its own job's environment short
        String end = "gpupool-environment-end-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        List<String> asAccount = new ArrayList<>(List.of(setpriv, "--reuid=" + account.uid(), "--regid=" + account.gid(), "--init-groups",
                "--inh-caps=-all", "--bounding-set=-all", "--", "/bin/sh", "-c", ACCOUNT_SIDE, "gpupool-enter", end, enterDir.toString()));
        asAccount.addAll(command);
        // what runs as root before the switch gets nothing the job chose
        return new Call(commandLine(dir, asAccount), Map.of("PATH", ROOT_PATH), dir.path(), exports(env, end));
    }

    /** The job's environment as the account's side reads it: one "export NAME='VALUE'" line each, then {@code end}. */
    static byte[] exports(Map<String, String> env, String end) throws IOException {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, String> e : env.entrySet()) {
            if (!NAME.matcher(e.getKey()).matches()) {
                throw new IOException("the environment variable '" + e.getKey() + "' has a name the shell wrapper cannot pass on (letters, digits and _ only)");
            }
            b.append("export ").append(e.getKey()).append("='").append(e.getValue().replace("'", "'\\''")).append("'\n");
        }
        return b.append(end).append('\n').toString().getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String cannotSwitchReason() {
        return setpriv == null ? "setpriv (util-linux) is missing" : null;
    }

    @Override
    public String description() {
        return "the shell wrapper (" + why + ")";
    }

    /** The command line that runs {@code command} in the wrapper for {@code dir}. */
    static List<String> commandLine(JobDirectory dir, List<String> command) {
        List<String> cmd = new ArrayList<>(List.of("/bin/sh", "-c", WRAPPER, "gpupool-job", dir.path().toString()));
        cmd.addAll(command);
        return cmd;
    }
}
