package io.gpupool.agent.node;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.gpupool.agent.AgentJson;
import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.JobPhase;
import io.gpupool.agent.protocol.JobStatusReport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Job status reports not yet acknowledged by the server, in order, on disk. While the server cannot be
 * reached they pile up here (jobs keep running); on reconnect they go out oldest first, and only the
 * server's acknowledgement removes them, so a report whose answer was lost is sent again, never dropped.
 *
 * <p>On disk: {@code status-journal.jsonl} gets one line per report, appended (a crash loses at most the
 * report being written, whose job end is then recovered from its job directory and reported again);
 * {@code status-acked} holds the highest acknowledged seq. When everything is acknowledged the journal is
 * emptied. Sequence numbers continue across restarts.
 */
public final class StatusBuffer {

    private static final String JOURNAL = "status-journal.jsonl";
    private static final String ACKED = "status-acked";

    private final Path journal;
    private final Path ackedFile;
    private final Deque<JobStatusReport> pending = new ArrayDeque<>();
    private long nextSeq;
    private long acked;
    private volatile Runnable onAdd = () -> { };

    public StatusBuffer(Path workDir) throws IOException {
        Files.createDirectories(workDir);
        this.journal = workDir.resolve(JOURNAL);
        this.ackedFile = workDir.resolve(ACKED);
        load();
    }

    /** Adds a report and writes it to the journal before returning. */
    public synchronized JobStatusReport add(JobKey key, JobPhase phase, Integer exitCode, Long pid, Long startedAtMs,
                                            Long endedAtMs, String message) {
        JobStatusReport r = new JobStatusReport(nextSeq, key.jobId(), key.attempt(), phase, exitCode, pid, startedAtMs,
                endedAtMs, message, key.submittedMs());
        try {
            byte[] line = (AgentJson.MAPPER.writeValueAsString(r) + "\n").getBytes(StandardCharsets.UTF_8);
            Files.write(journal, line, StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the status journal " + journal, e);
        }
        nextSeq++;
        pending.addLast(r);
        onAdd.run();
        return r;
    }

    /** Called after every added report (the agent then reports without waiting for its interval). */
    void onAdd(Runnable r) {
        this.onAdd = r;
    }

    /** The seq of the oldest unacknowledged report, else the next seq. */
    public synchronized long firstPendingSeq() {
        return pending.isEmpty() ? nextSeq : pending.peekFirst().seq();
    }

    /** Up to {@code max} unacknowledged reports, oldest first. */
    public synchronized List<JobStatusReport> pending(int max) {
        List<JobStatusReport> out = new ArrayList<>(Math.min(max, pending.size()));
        for (JobStatusReport r : pending) {
            if (out.size() >= max) break;
            out.add(r);
        }
        return out;
    }

    /** Whether a report about this attempt of this job waits for the server's acknowledgement. */
    public synchronized boolean pendingAbout(JobKey key) {
        for (JobStatusReport r : pending) if (r.key().equals(key)) return true;
        return false;
    }

    public synchronized int size() {
        return pending.size();
    }

    /** The server has every report up to {@code seq}: forget them. */
    public synchronized void acknowledge(long seq) throws IOException {
        if (seq <= acked) return;
        while (!pending.isEmpty() && pending.peekFirst().seq() <= seq) pending.removeFirst();
        acked = Math.min(seq, nextSeq - 1);
        AgentJson.writeAtomically(ackedFile, acked);
        if (pending.isEmpty()) Files.write(journal, new byte[0]);
    }

    /** The seq the next report gets. */
    public synchronized long nextSeq() {
        return nextSeq;
    }

    private void load() throws IOException {
        acked = -1;
        if (Files.exists(ackedFile)) acked = AgentJson.read(ackedFile, Long.class);
        nextSeq = acked + 1;
        List<String> lines;
        try {
            lines = Files.readAllLines(journal, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return;
        }
        for (String line : lines) {
            if (line.isBlank()) continue;
            JobStatusReport r;
            try {
                r = AgentJson.MAPPER.readValue(line, JobStatusReport.class);
            } catch (JsonProcessingException e) {
                continue; // the last line of a crash mid-write
            }
            nextSeq = Math.max(nextSeq, r.seq() + 1);
            if (r.seq() > acked) pending.addLast(r);
        }
    }
}
