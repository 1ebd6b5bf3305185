package io.gpupool.agent.run;

import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.JobLaunch;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * The job directories under {@code WORKDIR/jobs}. Creating an attempt's directory is the agent's
 * at-most-once gate: the directory is created atomically, so an attempt whose directory exists is never
 * started again, whatever the server sends and however often.
 *
 * <p>A directory is named by the job id, the attempt and the job's submit instant ({@code j57.1@1733150000000}): a job
 * that reuses an id after the server's store was restored from a backup gets a directory of its own, while an attempt
 * of the same job is refused. A directory without the instant ({@code j57.1}) was made by an agent of an earlier
 * release, or for a launch that named no instant (a server of an earlier release); it stands for any job of that id and
 * attempt (as those releases treated it), so it blocks every such launch.
 */
public final class JobStore {

    /** Separates the submit instant in a directory's name; never part of the id's part (see {@link #dirName}). */
    static final char INSTANT = '@';

    private final Path jobsDir;
    /** The names of the directories under jobsDir, kept with every create and delete (one agent process owns them). */
    private final ConcurrentSkipListSet<String> names = new ConcurrentSkipListSet<>();

    public JobStore(Path workDir) throws IOException {
        this.jobsDir = workDir.resolve("jobs");
        Files.createDirectories(jobsDir);
        try (Stream<Path> s = Files.list(jobsDir)) {
            s.filter(Files::isDirectory).forEach(p -> names.add(p.getFileName().toString()));
        }
    }

    /**
     * The new directory of {@code launch}, with launch.json written; empty if this attempt was started before (or, where
     * the launch or a directory does not know its job's submit instant, an attempt of the same id and number).
     */
    synchronized Optional<JobDirectory> create(JobLaunch launch) throws IOException {
        if (started(launch.key())) return Optional.empty();
        String name = dirName(launch.key());
        Path dir = jobsDir.resolve(name);
        try {
            Files.createDirectory(dir);
        } catch (FileAlreadyExistsException e) {
            names.add(name);
            return Optional.empty();
        }
        names.add(name);
        JobDirectory d = new JobDirectory(dir);
        try {
            d.writeLaunch(launch);
        } catch (IOException e) {
            Files.deleteIfExists(dir.resolve(JobDirectory.LAUNCH + ".tmp"));
            Files.deleteIfExists(dir); // nothing started: leave no trace, so the attempt can be asked for again
            names.remove(name);
            throw e;
        }
        return Optional.of(d);
    }

    /**
     * Whether this attempt was started here: its own directory exists, or one that does not tell its job apart (made by
     * an older agent), or, for a key without a submit instant, a directory of any job of that id and attempt.
     */
    public boolean started(JobKey key) {
        String legacy = legacyName(key);
        if (names.contains(dirName(key)) || names.contains(legacy)) return true;
        if (key.submittedMs() != null) return false;
        String ofAnyJob = names.ceiling(legacy + INSTANT);
        return ofAnyJob != null && ofAnyJob.startsWith(legacy + INSTANT);
    }

    /** The directory of exactly this attempt of this job (for a key without a submit instant: the older agent's). */
    public Optional<JobDirectory> find(JobKey key) {
        Path dir = jobsDir.resolve(dirName(key));
        return Files.isDirectory(dir) ? Optional.of(new JobDirectory(dir)) : Optional.empty();
    }

    /** Every attempt's directory, oldest first. */
    public List<JobDirectory> all() throws IOException {
        try (Stream<Path> s = Files.list(jobsDir)) {
            List<Path> dirs = new ArrayList<>(s.filter(Files::isDirectory).toList());
            dirs.sort(Comparator.comparing(JobStore::modified).thenComparing(Path::toString));
            return dirs.stream().map(JobDirectory::new).toList();
        }
    }

    /** Removes an attempt's directory (logs included): for retention, never for a running job. */
    public void delete(JobKey key) throws IOException {
        Optional<JobDirectory> d = find(key);
        if (d.isEmpty()) return;
        try (Stream<Path> s = Files.walk(d.get().path())) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
        names.remove(d.get().path().getFileName().toString());
    }

    /**
     * Deletes the directories of attempts that ended more than {@code retention} ago, except those
     * {@code keep} names (their output is still on its way to the server). Their logs go with them, and
     * so does the at-most-once record; the desired-state version check still refuses a late message.
     *
     * @return how many were deleted
     */
    public int pruneEnded(Duration retention, Predicate<JobKey> keep) throws IOException {
        long cutoff = System.currentTimeMillis() - retention.toMillis();
        int deleted = 0;
        for (JobDirectory d : all()) {
            Path outcome = d.path().resolve(JobDirectory.OUTCOME);
            if (!Files.exists(outcome) || Files.getLastModifiedTime(outcome).toMillis() > cutoff) continue;
            JobKey key = d.launch().key();
            if (keep.test(key)) continue;
            delete(key);
            deleted++;
        }
        return deleted;
    }

    /**
     * A file-system-safe, collision-free name: the id's safe characters, then a short hash of the exact id when anything
     * had to be replaced, then the attempt, then {@code @} and the job's submit instant where the key has one. The safe
     * characters exclude {@code @}, so the instant's part cannot be mistaken for an id's.
     */
    static String dirName(JobKey key) {
        String legacy = legacyName(key);
        return key.submittedMs() == null ? legacy : legacy + INSTANT + key.submittedMs();
    }

    /** The name an agent of an earlier release gave the attempt's directory (it did not know the submit instant). */
    static String legacyName(JobKey key) {
        String id = key.jobId();
        String safe = id.replaceAll("[^A-Za-z0-9._-]", "_");
        if (safe.length() > 80) safe = safe.substring(0, 80);
        if (!safe.equals(id) || safe.startsWith(".")) {
            safe = safe + "-" + HexFormat.of().formatHex(sha256(id), 0, 6);
        }
        return safe + "." + key.attempt();
    }

    private static byte[] sha256(String s) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static long modified(Path p) {
        try {
            return Files.getLastModifiedTime(p).toMillis();
        } catch (IOException e) {
            return 0;
        }
    }
}
