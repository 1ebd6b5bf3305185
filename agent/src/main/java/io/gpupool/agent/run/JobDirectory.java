package io.gpupool.agent.run;

import io.gpupool.agent.AgentJson;
import io.gpupool.agent.protocol.JobLaunch;
import io.gpupool.agent.protocol.LogStream;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * One attempt's directory under {@code WORKDIR/jobs/}: the agent's durable record of it, which survives
 * an agent restart (like slurmd's spool directory). Its existence means "this attempt was started here":
 *
 * <pre>
 *   launch.json    the JobLaunch, written before the process starts
 *   process.json   pid and start time of the process, written right after it started
 *   pid            written by the job's wrapper as its first act (covers a crash between the two above)
 *   stdout.log     the job's standard output, written by the job directly (no agent in between)
 *   stderr.log     its standard error
 *   exit           the command's exit code, written by the wrapper when the command ends
 *   outcome.json   the JobEnd, written by the agent when it has seen the end; marks the attempt done
 *   work/          the command's working directory when the job names none and runs as its own account
 * </pre>
 *
 * <p>A job that runs as its own account ({@link #handOver}) owns its logs and its work directory, readable by it
 * alone; the directory itself and the control files stay the agent's (mode 0711: the job reaches its files by
 * name but cannot list, replace or forge the agent's records).
 */
public record JobDirectory(Path path) {

    static final String LAUNCH = "launch.json";
    static final String PROCESS = "process.json";
    static final String PID = "pid";
    static final String EXIT = "exit";
    static final String OUTCOME = "outcome.json";
    static final String WORK = "work";

    /** pid and start instant of the wrapper process, and the wall-clock time the agent started it. */
    public record ProcessRecord(long pid, Long startInstantMs, long startedAtMs) {}

    public Path stdout() {
        return log(LogStream.STDOUT);
    }

    public Path stderr() {
        return log(LogStream.STDERR);
    }

    public Path log(LogStream stream) {
        return path.resolve(switch (stream) {
            case STDOUT -> "stdout.log";
            case STDERR -> "stderr.log";
        });
    }

    public JobLaunch launch() throws IOException {
        return AgentJson.read(path.resolve(LAUNCH), JobLaunch.class);
    }

    void writeLaunch(JobLaunch launch) throws IOException {
        AgentJson.writeAtomically(path.resolve(LAUNCH), launch);
    }

    void writeProcess(long pid, Optional<Instant> start, long startedAtMs) throws IOException {
        AgentJson.writeAtomically(path.resolve(PROCESS),
                new ProcessRecord(pid, start.map(Instant::toEpochMilli).orElse(null), startedAtMs));
    }

    /** The default working directory of a job that runs as its own account. */
    public Path work() {
        return path.resolve(WORK);
    }

    /**
     * Opens the attempt's directory to every account by name only (0711): a job under its own account reaches its
     * files in it, but cannot list, replace or forge the agent's records.
     */
    void openByName() throws IOException {
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rwx--x--x"));
    }

    /**
     * Gives the job's files to its account: logs 0600 and (with {@code workDir}) the work directory 0700, after
     * {@link #openByName}. (The native wrapper does the same itself, {@link NativeWrapper}.)
     */
    void handOver(UnixAccount account, boolean workDir) throws IOException {
        openByName();
        for (Path log : List.of(stdout(), stderr())) {
            if (!Files.exists(log)) Files.createFile(log);
            own(log, account, "rw-------");
        }
        if (workDir) {
            Files.createDirectories(work());
            own(work(), account, "rwx------");
        }
    }

    private static void own(Path p, UnixAccount a, String mode) throws IOException {
        Files.setAttribute(p, "unix:uid", a.uid(), LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(p, "unix:gid", a.gid(), LinkOption.NOFOLLOW_LINKS);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(mode));
    }

    /** The process record; else, after a crash right after the start, the wrapper's pid file. */
    Optional<ProcessRecord> process() throws IOException {
        try {
            return Optional.of(AgentJson.read(path.resolve(PROCESS), ProcessRecord.class));
        } catch (NoSuchFileException e) {
            Optional<Long> pid = readLong(PID);
            long launchedAt = Files.getLastModifiedTime(path.resolve(LAUNCH)).toMillis();
            return pid.map(p -> new ProcessRecord(p, null, launchedAt));
        }
    }

    /** The exit code the wrapper wrote; empty while the command runs or when the wrapper itself was killed. */
    public Optional<Integer> exitCode() throws IOException {
        try {
            String s = Files.readString(path.resolve(EXIT));
            // the wrapper writes "CODE\n"; without the newline the write was cut short
            return s.endsWith("\n") ? parse(EXIT, s).map(Math::toIntExact) : Optional.empty();
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    /** Whether the agent has recorded the attempt's end (cheaper than reading it). */
    public boolean ended() {
        return Files.exists(path.resolve(OUTCOME));
    }

    public Optional<JobEnd> outcome() throws IOException {
        try {
            return Optional.of(AgentJson.read(path.resolve(OUTCOME), JobEnd.class));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    void writeOutcome(JobEnd end) throws IOException {
        AgentJson.writeAtomically(path.resolve(OUTCOME), end);
    }

    private Optional<Long> readLong(String file) throws IOException {
        try {
            return parse(file, Files.readString(path.resolve(file)));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    private Optional<Long> parse(String file, String content) throws IOException {
        String s = content.trim();
        try {
            return s.isEmpty() ? Optional.empty() : Optional.of(Long.parseLong(s));
        } catch (NumberFormatException e) {
            throw new IOException(path.resolve(file) + ": not a number", e);
        }
    }
}
