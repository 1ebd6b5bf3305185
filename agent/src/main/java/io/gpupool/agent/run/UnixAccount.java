package io.gpupool.agent.run;

import io.gpupool.agent.CommandOutput;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A Unix account of this node, as the C library's name service sees it: {@code getent passwd}, so accounts
 * from LDAP or SSSD count as they do for login and for Slurm.
 */
public record UnixAccount(String name, int uid, int gid, String home) {

    /** How long a look-up through the name service may take (LDAP can be slow, never this slow). */
    private static final Duration LOOKUP_TIMEOUT = Duration.ofSeconds(10);

    /** The account called {@code name}; empty if this node has none. */
    public static Optional<UnixAccount> lookup(String name) throws IOException {
        CommandOutput out = CommandOutput.run(List.of("getent", "passwd", name), LOOKUP_TIMEOUT);
        // exit 2: no such key; anything else with no output is a name-service failure, not a missing account
        if (out.exitCode() == 2) return Optional.empty();
        if (out.exitCode() != 0) throw new IOException("getent passwd " + name + " failed (exit " + out.exitCode() + "): " + out.firstMessage());
        return Optional.of(parse(out.stdout().strip().lines().findFirst().orElse("")));
    }

    /**
     * The gids of this account's groups, its primary group among them, as login (initgroups) gives them: {@code id -G},
     * which asks the C library's name service as {@code getent} does.
     */
    public List<Integer> groups() throws IOException {
        CommandOutput out = CommandOutput.run(List.of("id", "-G", "--", name), LOOKUP_TIMEOUT);
        if (out.exitCode() != 0) throw new IOException("id -G " + name + " failed (exit " + out.exitCode() + "): " + out.firstMessage());
        try {
            List<Integer> gids = new ArrayList<>();
            for (String g : out.stdout().strip().split("\\s+")) gids.add(Integer.parseInt(g));
            return List.copyOf(gids);
        } catch (NumberFormatException e) {
            throw new IOException("id -G " + name + " printed no list of gids", e);
        }
    }

    /** One passwd(5) line: name:password:uid:gid:gecos:home:shell. */
    static UnixAccount parse(String line) throws IOException {
        String[] f = line.split(":", -1);
        if (f.length < 7) throw new IOException("not a passwd entry: '" + line + "'");
        try {
            return new UnixAccount(f[0], Integer.parseInt(f[2]), Integer.parseInt(f[3]), f[5]);
        } catch (NumberFormatException e) {
            throw new IOException("not a passwd entry: '" + line + "'");
        }
    }

    /** The effective uid of this process, from /proc/self/status; -1 if unknown (not Linux). */
    public static int effectiveUid() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) return Integer.parseInt(line.split("\\s+")[2]);
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: treat as an account that cannot switch
        }
        return -1;
    }
}
