package io.gpupool.sim.trace;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A text file mapped into memory, read line by line from any byte offset: sequentially for the indexing
 * pass, and in submit order (random offsets) when a trace's rows are not sorted. Mapping avoids a system
 * call per line and works for files larger than 2 GiB. Lines end in LF or CRLF; a UTF-8 BOM is skipped.
 */
final class MappedLines implements AutoCloseable {
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment data;
    private final long size;
    private byte[] buf = new byte[256];
    /** Offset just past the line last read (the next line's start). */
    private long next;

    MappedLines(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            size = ch.size();
            data = size == 0 ? MemorySegment.NULL : ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
        } catch (IOException e) {
            arena.close();
            throw new UncheckedIOException("cannot read trace " + file + ": " + e.getMessage(), e);
        }
    }

    long size() { return size; }

    /** Where the first line starts (after a UTF-8 BOM). */
    long start() {
        return size >= 3 && byteAt(0) == (byte) 0xEF && byteAt(1) == (byte) 0xBB && byteAt(2) == (byte) 0xBF ? 3 : 0;
    }

    /** The line starting at {@code offset}, without its line end; null at the end of the file. */
    String lineAt(long offset) {
        if (offset >= size) {
            next = size;
            return null;
        }
        long end = offset;
        while (end < size && byteAt(end) != '\n') end++;
        next = end < size ? end + 1 : size;
        if (end > offset && byteAt(end - 1) == '\r') end--;
        int len = (int) Math.min(Integer.MAX_VALUE - 8, end - offset);
        if (buf.length < len) buf = new byte[Math.max(len, buf.length * 2)];
        MemorySegment.copy(data, ValueLayout.JAVA_BYTE, offset, buf, 0, len);
        return new String(buf, 0, len, StandardCharsets.UTF_8);
    }

    /** The offset after the line {@link #lineAt} last returned. */
    long nextOffset() { return next; }

    /** Where the first line that starts at or after {@code offset} starts ({@link #size()} when none does). */
    long lineStartFrom(long offset) {
        if (offset <= 0) return 0;
        long i = offset - 1;   // a line starts at offset when the byte before it ends a line
        while (i < size && byteAt(i) != '\n') i++;
        return Math.min(size, i + 1);
    }

    /** How many lines end in {@code [from, to)}. */
    int countLineEnds(long from, long to) {
        int n = 0;
        for (long i = from; i < to; i++) if (byteAt(i) == '\n') n++;
        return n;
    }

    private byte byteAt(long i) {
        return data.get(ValueLayout.JAVA_BYTE, i);
    }

    @Override
    public void close() {
        arena.close();
    }
}
