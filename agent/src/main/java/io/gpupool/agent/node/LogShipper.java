package io.gpupool.agent.node;

import io.gpupool.agent.protocol.JobKey;
import io.gpupool.agent.protocol.LogChunk;
import io.gpupool.agent.protocol.LogOffset;
import io.gpupool.agent.protocol.LogStream;
import io.gpupool.agent.run.JobDirectory;
import io.gpupool.agent.run.JobStore;
import io.gpupool.agent.run.LogReader;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Sends the jobs' output to the server a report at a time: for every stream it tracks the length the
 * server has acknowledged and sends what lies beyond, within a byte budget per report. A stream is
 * tracked from its job's start until its job has ended and the server holds all of it. The acknowledged
 * lengths are kept in {@link AgentState}, so a restarted agent resumes where the server is.
 */
final class LogShipper {

    /** One stream of one attempt. */
    record StreamKey(JobKey job, LogStream stream) {
        /** {@code JOB#ATTEMPT/STREAM}, with {@code @SUBMITTED_MS} after the attempt where the job's submit instant is known. */
        String text() {
            return job.jobId() + "#" + job.attempt() + (job.submittedMs() == null ? "" : "@" + job.submittedMs()) + "/" + stream;
        }

        /**
         * Parses {@link #text()}, also an older agent's (without the instant); the job id may itself hold '#', '@' or '/', so
         * it is parsed from the end.
         */
        static StreamKey parse(String s) {
            int slash = s.lastIndexOf('/');
            int hash = s.lastIndexOf('#', slash);
            String attempt = s.substring(hash + 1, slash);
            int at = attempt.indexOf('@');
            JobKey job = at < 0 ? new JobKey(s.substring(0, hash), Integer.parseInt(attempt))
                    : new JobKey(s.substring(0, hash), Integer.parseInt(attempt.substring(0, at)), Long.parseLong(attempt.substring(at + 1)));
            return new StreamKey(job, LogStream.valueOf(s.substring(slash + 1)));
        }
    }

    static final int MAX_CHUNK = LogReader.DEFAULT_MAX_BYTES;

    private final JobStore store;
    private final AgentState state;
    private final Map<StreamKey, Long> acked = new LinkedHashMap<>();
    /** Streams whose last collected chunk was the complete end; done once an answer acknowledges it. */
    private final Set<StreamKey> endSent = new HashSet<>();

    LogShipper(JobStore store, AgentState state) {
        this.store = store;
        this.state = state;
        state.logOffsets().forEach((k, v) -> acked.put(StreamKey.parse(k), v));
    }

    /** Starts shipping an attempt's output (idempotent). */
    synchronized void track(JobKey job) {
        for (LogStream s : LogStream.values()) acked.putIfAbsent(new StreamKey(job, s), 0L);
    }

    /** New output of every tracked stream, at most {@code budget} bytes in all, oldest streams first. */
    synchronized List<LogChunk> collect(int budget) {
        List<LogChunk> out = new ArrayList<>();
        int left = budget;
        for (Map.Entry<StreamKey, Long> e : acked.entrySet()) {
            if (left <= 0) break;
            StreamKey k = e.getKey();
            Optional<JobDirectory> dir = store.find(k.job());
            if (dir.isEmpty()) continue;
            try {
                // a stat or two per stream and report: only a stream with new bytes, or an ended one, is read
                boolean ended = dir.get().ended();
                if (!ended && sizeOf(dir.get().log(k.stream())) <= e.getValue()) continue;
                LogReader.Chunk c = LogReader.read(dir.get().log(k.stream()), e.getValue(), Math.min(MAX_CHUNK, left));
                boolean complete = ended && c.atEnd();
                // an empty chunk only to say "complete", so the server knows the stream has ended (even an empty one)
                if (c.data().length == 0 && !complete) continue;
                out.add(new LogChunk(k.job().jobId(), k.job().attempt(), k.stream(), c.offset(), c.data(), complete, k.job().submittedMs()));
                if (complete) endSent.add(k);
                else endSent.remove(k);
                left -= Math.max(1, c.data().length);
            } catch (IOException ex) {
                // unreadable this time: try again next report
            }
        }
        return out;
    }

    /** Records what the server holds; a stream of an ended job that the server holds completely is done. */
    synchronized void acknowledge(List<LogOffset> acks) throws IOException {
        for (LogOffset a : acks) {
            JobKey job = new JobKey(a.jobId(), a.attempt(), a.submittedMs());
            // an acknowledgement without the submit instant (a server of the release before it) is about that id's attempt
            for (Map.Entry<StreamKey, Long> e : acked.entrySet()) {
                StreamKey k = e.getKey();
                if (k.stream() == a.stream() && (a.submittedMs() == null ? k.job().sameAttempt(job) : k.job().equals(job))) {
                    e.setValue(Math.max(e.getValue(), a.offset()));
                }
            }
        }
        acked.entrySet().removeIf(e -> store.find(e.getKey().job()).isEmpty() || endSent.contains(e.getKey()) && complete(e.getKey(), e.getValue()));
        endSent.retainAll(acked.keySet());
        Map<String, Long> persisted = new LinkedHashMap<>();
        acked.forEach((k, v) -> persisted.put(k.text(), v));
        state.logOffsets(persisted);
    }

    synchronized boolean tracking(JobKey job) {
        return acked.keySet().stream().anyMatch(k -> k.job().equals(job));
    }

    private static long sizeOf(java.nio.file.Path p) {
        try {
            return java.nio.file.Files.size(p);
        } catch (IOException e) {
            return 0; // not created yet
        }
    }

    /** The server holds all of an ended attempt's stream. */
    private boolean complete(StreamKey k, long offset) {
        Optional<JobDirectory> dir = store.find(k.job());
        if (dir.isEmpty()) return true;
        try {
            if (!dir.get().ended()) return false;
            return LogReader.read(dir.get().log(k.stream()), offset, 1).atEnd();
        } catch (IOException e) {
            return false;
        }
    }
}
