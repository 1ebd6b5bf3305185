package io.gpupool.agent.run;

import io.gpupool.agent.CommandOutput;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The wrapper as one small C program, {@code gpupool-jobwrap} (agent/src/main/c/jobwrap.c), built with the agent
 * where a C compiler is at hand and carried in its jar. Per job it costs one exec and one vfork of its own, where the
 * shell wrapper costs three execs for a job under an account (sh, setpriv, sh): it switches the account itself
 * (bounding and inheritable capabilities dropped, groups, gid, uid) and enters the directory as the account; before,
 * as root, it hands the job's logs (through its open descriptors) and new work directory to the account. The job's
 * environment reaches it on stdin, never on its command line (which every account can read) and never in its own
 * environment (nothing the job chose reaches a program that runs as root); it then reads /dev/null as stdin.
 *
 * <p>The agent installs the program from its jar into {@code WORKDIR/bin/} (mode 0700, a directory only the agent's
 * account may write) under a name that carries a hash of its content, so an upgrade never overwrites the file a running
 * job's wrapper was started from, and removes the other versions there (a running program keeps its file's content).
 *
 * @param program the installed program
 */
record NativeWrapper(Path program) implements JobWrapper {

    static final String NAME = "gpupool-jobwrap";
    /** The program for this machine's architecture in the agent's jar; absent where no C compiler built it. */
    static final String RESOURCE = NAME + "-" + System.getProperty("os.arch");

    /** The installed wrapper, or why there is none. */
    record Installed(NativeWrapper wrapper, String whyNot) {}

    @Override
    public Call asAgent(JobDirectory dir, List<String> command, Map<String, String> env, Path workDir) {
        return new Call(commandLine(dir, List.of(), command), Map.of(), workDir, environment(env));
    }

    @Override
    public Call asAccount(JobDirectory dir, List<String> command, Map<String, String> env, Path enterDir, boolean makeWorkDir,
                          UnixAccount account, List<Integer> groups) throws IOException {
        dir.openByName();
        String groupList = groups.stream().map(String::valueOf).collect(Collectors.joining(","));
        List<String> options = new ArrayList<>(List.of("--account", Integer.toString(account.uid()), Integer.toString(account.gid()), groupList,
                "--own-logs"));
        if (makeWorkDir) options.addAll(List.of("--own-dir", dir.work().toString()));
        options.addAll(List.of("--chdir", enterDir.toString()));
        return new Call(commandLine(dir, options, command), Map.of(), dir.path(), environment(env));
    }

    @Override
    public String cannotSwitchReason() {
        return null;
    }

    @Override
    public String description() {
        return "the native wrapper " + program;
    }

    private List<String> commandLine(JobDirectory dir, List<String> options, List<String> command) {
        List<String> cmd = new ArrayList<>(List.of(program.toString(), dir.path().toString()));
        cmd.addAll(options);
        cmd.add("--");
        cmd.addAll(command);
        return cmd;
    }

    /** What the program reads on stdin: "NAME=VALUE\0" per variable, then an empty entry (a cut stream is refused). */
    static byte[] environment(Map<String, String> env) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(64 * env.size() + 1);
        env.forEach((k, v) -> {
            out.writeBytes((k + "=" + v).getBytes(StandardCharsets.UTF_8));
            out.write(0);
        });
        out.write(0);
        return out.toByteArray();
    }

    /** Installs the program carried in the jar under {@code workDir}/bin; the reason where it cannot. */
    static Installed install(Path workDir) {
        byte[] program;
        try (InputStream in = NativeWrapper.class.getResourceAsStream(RESOURCE)) {
            if (in == null) return new Installed(null, "was not built for " + System.getProperty("os.arch") + " (no C compiler at build time)");
            program = in.readAllBytes();
        } catch (IOException e) {
            return new Installed(null, "cannot be read from the agent's jar: " + e.getMessage());
        }
        return install(workDir, program);
    }

    /**
     * Installs {@code program} under {@code workDir}/bin and runs it once ({@code --version}): one built for another
     * machine (a bundle moved to an older C library, where it was linked dynamically) is found here, not by a job.
     */
    static Installed install(Path workDir, byte[] program) {
        try {
            Path bin = privateDirectory(workDir.resolve("bin"));
            Path target = bin.resolve(NAME + "-" + HexFormat.of().formatHex(sha256(program), 0, 8));
            if (!Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS) || !java.util.Arrays.equals(Files.readAllBytes(target), program)) {
                Path tmp = Files.createTempFile(bin, NAME, ".tmp", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                Files.write(tmp, program);
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
            try (DirectoryStream<Path> old = Files.newDirectoryStream(bin, NAME + "-*")) {
                for (Path p : old) if (!p.equals(target)) Files.deleteIfExists(p);
            }
            String whyNot = runsHere(target);
            return whyNot == null ? new Installed(new NativeWrapper(target), null) : new Installed(null, whyNot);
        } catch (IOException e) {
            return new Installed(null, "cannot be installed: " + e.getMessage());
        }
    }

    /** Null where {@code program --version} answers as this wrapper; else why not. */
    private static String runsHere(Path program) {
        try {
            CommandOutput out = CommandOutput.run(List.of(program.toString(), "--version"), Duration.ofSeconds(10));
            if (out.exitCode() == 0 && out.stdout().startsWith(NAME + " ")) return null;
            return "cannot run on this machine (" + program + " --version: exit " + out.exitCode() + ", " + out.firstMessage() + ")";
        } catch (IOException e) {
            return "cannot run on this machine (" + e.getMessage() + ")";
        }
    }

    /**
     * {@code dir}, created 0700 where it is missing; refused where an account other than root and the agent's may
     * replace it or any directory above it (as sshd's StrictModes checks a key's path): each must belong to one of the
     * two and be writable by no one else, or be sticky like /tmp, where no one else may rename what is not theirs.
     */
    private static Path privateDirectory(Path dir) throws IOException {
        Path parent = dir.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        for (Path p = parent.toRealPath(); p != null; p = p.getParent()) safeFromOthers(p, true);
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (java.nio.file.FileAlreadyExistsException e) {
                // made meanwhile: checked below like any existing one
            }
        }
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) throw new IOException(dir + " is not a directory");
        safeFromOthers(dir, false);
        return dir;
    }

    /** Refuses {@code p} where another account than root and this process's owns it or may write to it (sticky: allowed where asked). */
    private static void safeFromOthers(Path p, boolean stickyWillDo) throws IOException {
        int owner = (Integer) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int mode = (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        if (owner != 0 && owner != UnixAccount.effectiveUid()) throw new IOException(p + " belongs to another account (uid " + owner + ")");
        boolean sticky = (mode & 01000) != 0;
        if ((mode & 0022) != 0 && !(stickyWillDo && sticky)) throw new IOException(p + " may be written by other accounts");
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
