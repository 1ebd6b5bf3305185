package io.gpupool.sim.trace;

import io.gpupool.model.SpecException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A CSV trace on disk, in any {@link TraceFormat}, streamed in two passes.
 *
 * <p>Indexing (once): every row is parsed and checked, but only a compact index is kept per job: submit
 * time, byte offset and line number (20 bytes a job; the whole Philly table takes 1.6 MB). Bad rows stop
 * here with file:line, column and rule, or are counted and left out with {@code --skip-bad-rows}; so a
 * replay never fails half-way. The index is then sorted by submit time (stable: file order breaks ties),
 * which is how unsorted files such as Philly's are replayed without holding their rows. Rows of 1 MB or more,
 * in a format whose rows map one by one ({@link TraceFormat#mapsRowsIndependently}), are indexed in two halves by
 * two threads: the index, the errors and the counts are the same, and a replay starts sooner (start-up is most of
 * a short replay).
 *
 * <p>Replay (once per policy): rows are read again at the indexed offsets, in submit order, and mapped to
 * jobs as the simulator pulls them. A sorted file is read front to back; an unsorted one by offset from
 * the memory-mapped file.
 */
public final class TraceFile implements Trace {
    private static final int FIRST_SKIPPED_KEPT = 5;
    /** Rows of at least this many bytes are indexed by two threads (see {@link #halfway}). */
    static final long PARALLEL_INDEX_BYTES = 1 << 20;

    private final Path file;
    private final String name;
    private final TraceFormat format;
    private final TraceContext context;
    private final TraceStats stats;
    private long[] submit;
    private long[] offset;
    private int[] line;
    private int size;
    private int[] order;          // index positions in submit order; null when the file is sorted
    private long shiftMs;

    private TraceFile(Path file, TraceFormat format, TraceContext context, boolean skipBadRows) {
        this.file = file;
        this.name = file.toString();
        this.format = format;
        this.context = context;
        this.stats = index(skipBadRows);
    }

    /** Indexes the file (checking every row); throws {@link SpecException} on the first bad row unless skipping. */
    public static TraceFile open(Path file, TraceFormat format, TraceContext context, boolean skipBadRows) {
        if (!Files.isRegularFile(file)) throw new SpecException("--trace", "trace", "no such file: " + file);
        return new TraceFile(file, format, context, skipBadRows);
    }

    @Override public String label() { return file.getFileName().toString(); }

    @Override public TraceStats stats() { return stats; }

    // ---- indexing -------------------------------------------------------------------------------

    private TraceStats index(boolean skipBadRows) {
        RowIndex rows;
        List<String> firstSkipped;
        long skipped;
        try (MappedLines lines = new MappedLines(file)) {
            long at = lines.start();
            String header = lines.lineAt(at);
            if (header == null || header.isBlank()) {
                throw new SpecException(name + ":1", null, "empty trace: the first line must be a header row (" + format.description() + ")");
            }
            Columns columns = new Columns(header, name + ":1");
            TraceFormat.RowMapper mapper = format.bind(columns, context);
            long from = lines.nextOffset();
            long half = halfway(lines, from);
            if (half < lines.size()) {
                rows = indexInHalves(lines, columns, mapper, from, half, skipBadRows);
            } else {
                rows = new RowIndex();
                rows.index(lines, mapper, columns, from, lines.size(), 1, skipBadRows, null);
            }
            submit = rows.submit;
            offset = rows.offset;
            line = rows.line;
            size = rows.size;
            firstSkipped = rows.firstSkipped;
            skipped = rows.skipped + dropDuplicateIds(lines, mapper, columns, rows.idHash, skipBadRows, firstSkipped);
        }
        sortBySubmit();
        return new TraceStats(rows.rows, size, skipped, firstSkipped, rows.ignored);
    }

    /**
     * Where the second half of the rows starts when two threads index the file, else the file's end: the format must
     * allow it, the rows must be {@link #PARALLEL_INDEX_BYTES} or more, and there must be a second processor.
     */
    private long halfway(MappedLines lines, long from) {
        if (!format.mapsRowsIndependently() || lines.size() - from < PARALLEL_INDEX_BYTES || Runtime.getRuntime().availableProcessors() < 2) {
            return lines.size();
        }
        return lines.lineStartFrom(from + (lines.size() - from) / 2);
    }

    /**
     * Indexes the rows before {@code half} on this thread and those after on another, which first counts the lines of
     * the first half (a byte scan) so that its rows carry their line numbers; the two indexes are joined in file order,
     * so they are what one thread would have made. The first bad row of the file is the first half's, if it has one.
     */
    private RowIndex indexInHalves(MappedLines lines, Columns columns, TraceFormat.RowMapper mapper, long from, long half, boolean skipBadRows) {
        AtomicBoolean stop = new AtomicBoolean();
        FutureTask<RowIndex> second = new FutureTask<>(() -> {
            try (MappedLines own = new MappedLines(file)) {   // a mapping is read by the thread that made it
                RowIndex r = new RowIndex();
                r.index(own, format.bind(columns, context), columns, half, own.size(), 1 + own.countLineEnds(from, half), skipBadRows, stop);
                return r;
            }
        });
        Thread.ofPlatform().name("trace-index").daemon(true).start(second);
        RowIndex first = new RowIndex();
        try {
            first.index(lines, mapper, columns, from, half, 1, skipBadRows, null);
        } catch (RuntimeException | Error e) {
            stop.set(true);   // the error to report is this one, whatever the second half holds
            throw e;
        }
        first.append(result(second));
        return first;
    }

    /** The task's result, or what it threw. */
    private RowIndex result(FutureTask<RowIndex> task) {
        try {
            return task.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            if (e.getCause() instanceof Error r) throw r;
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while indexing " + file, e);
        }
    }

    /** The index of a run of rows: per job its submit time, byte offset, line and id hash, and what was left out. */
    private final class RowIndex {
        long[] submit = new long[1024], offset = new long[1024], idHash = new long[1024];
        int[] line = new int[1024];
        int size;
        long rows, skipped;
        final List<String> firstSkipped = new ArrayList<>();
        final Map<String, Long> ignored = new TreeMap<>();

        /**
         * Indexes the rows that start in {@code [from, to)}, the first on line {@code lineNo + 1}; throws {@link SpecException}
         * on a bad row unless skipping; returns early once {@code stop} (may be null) is set.
         */
        void index(MappedLines lines, TraceFormat.RowMapper mapper, Columns columns, long from, long to, int lineNo,
                   boolean skipBadRows, AtomicBoolean stop) {
            for (long at = from; at < to && (stop == null || !stop.get()); at = lines.nextOffset()) {
                String text = lines.lineAt(at);
                if (text == null) break;
                lineNo++;
                if (text.isBlank()) continue;
                rows++;
                Row row = new Row(name, lineNo, Row.split(text), columns);
                TraceJob job;
                try {
                    job = mapper.map(row, 0);
                } catch (SpecException e) {
                    if (!skipBadRows) throw e;
                    skipped++;
                    if (firstSkipped.size() < FIRST_SKIPPED_KEPT) firstSkipped.add(e.getMessage());
                    continue;
                }
                if (job == null) {
                    ignored.merge(row.ignoredReason(), 1L, Long::sum);
                    continue;
                }
                if (size == submit.length) grow(size * 2);
                submit[size] = job.spec().submitTimeMs();
                offset[size] = at;
                line[size] = lineNo;
                idHash[size] = hash64(job.spec().id());
                size++;
            }
        }

        /** Adds the rows of {@code later}, which come after these in the file. */
        void append(RowIndex later) {
            if (size + later.size > submit.length) grow(size + later.size);
            System.arraycopy(later.submit, 0, submit, size, later.size);
            System.arraycopy(later.offset, 0, offset, size, later.size);
            System.arraycopy(later.line, 0, line, size, later.size);
            System.arraycopy(later.idHash, 0, idHash, size, later.size);
            size += later.size;
            rows += later.rows;
            skipped += later.skipped;
            for (String s : later.firstSkipped) if (firstSkipped.size() < FIRST_SKIPPED_KEPT) firstSkipped.add(s);
            later.ignored.forEach((reason, n) -> ignored.merge(reason, n, Long::sum));
        }

        private void grow(int length) {
            submit = Arrays.copyOf(submit, length);
            offset = Arrays.copyOf(offset, length);
            line = Arrays.copyOf(line, length);
            idHash = Arrays.copyOf(idHash, length);
        }
    }

    /**
     * Job ids must be unique. Ids are compared by a 64-bit hash first (8 bytes a job); only rows whose
     * hash occurs twice are read again and compared by their real ids. Returns the rows dropped.
     */
    private int dropDuplicateIds(MappedLines lines, TraceFormat.RowMapper mapper, Columns columns, long[] idHash,
                                 boolean skipBadRows, List<String> firstSkipped) {
        long[] sorted = Arrays.copyOf(idHash, size);
        Arrays.sort(sorted);
        Set<Long> clashing = new HashSet<>();
        for (int i = 1; i < size; i++) if (sorted[i] == sorted[i - 1]) clashing.add(sorted[i]);
        if (clashing.isEmpty()) return 0;
        Map<String, Integer> firstLine = new HashMap<>();
        boolean[] drop = new boolean[size];
        int dropped = 0;
        for (int i = 0; i < size; i++) {
            if (!clashing.contains(idHash[i])) continue;
            String where = name + ":" + line[i];
            TraceJob job = mapper.map(new Row(name, line[i], Row.split(lines.lineAt(offset[i])), columns), 0);
            Integer first = firstLine.putIfAbsent(job.spec().id(), line[i]);
            if (first == null) continue;
            SpecException e = new SpecException(where, "job_id", "duplicate job id '" + job.spec().id() + "' (first on line " + first + ")");
            if (!skipBadRows) throw e;
            if (firstSkipped.size() < FIRST_SKIPPED_KEPT) firstSkipped.add(e.getMessage());
            drop[i] = true;
            dropped++;
        }
        int k = 0;
        for (int i = 0; i < size; i++) {
            if (drop[i]) continue;
            submit[k] = submit[i];
            offset[k] = offset[i];
            line[k] = line[i];
            k++;
        }
        size = k;
        return dropped;
    }

    private void sortBySubmit() {
        boolean sorted = true;
        long min = Long.MAX_VALUE;
        for (int i = 0; i < size; i++) {
            min = Math.min(min, submit[i]);
            if (i > 0 && submit[i] < submit[i - 1]) sorted = false;
        }
        shiftMs = size == 0 ? 0 : min;
        if (sorted) return;
        order = new int[size];
        for (int i = 0; i < size; i++) order[i] = i;
        StableSort.byKey(order, submit);
    }

    /** FNV-1a over the UTF-16 units, then a final mix: a 64-bit hash of a job id. */
    static long hash64(String s) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < s.length(); i++) {
            h ^= s.charAt(i);
            h *= 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        return h ^ (h >>> 33);
    }

    // ---- replay ---------------------------------------------------------------------------------

    @Override
    public Cursor open() {
        MappedLines lines = new MappedLines(file);
        String header = lines.lineAt(lines.start());
        Columns columns = new Columns(header, name + ":1");
        TraceFormat.RowMapper mapper = format.bind(columns, context);
        long shift = mapper.relativeToFirstSubmit() ? shiftMs : 0;
        return new Cursor() {
            int k;

            @Override public boolean hasNext() { return k < size; }

            @Override
            public TraceJob next() {
                if (k >= size) throw new NoSuchElementException();
                int i = order == null ? k : order[k];
                k++;
                Row row = new Row(name, line[i], Row.split(lines.lineAt(offset[i])), columns);
                return mapper.map(row, shift);
            }

            @Override public void close() { lines.close(); }
        };
    }
}
