package io.gpupool.agent.run;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Reads a job's log file from a byte offset, the way {@code gpupool logs JOB [--follow]} needs it: a reader
 * remembers the offset it reached and asks again from there; following polls until the job has ended and
 * everything it wrote has been read. Offsets are bytes, so a chunk may end inside a UTF-8 character; the
 * next chunk continues it.
 */
public final class LogReader {

    /** Bytes of a log from {@code offset} to {@code nextOffset}; {@code atEnd} when nothing more was there. */
    public record Chunk(long offset, byte[] data, long nextOffset, boolean atEnd) {}

    public static final int DEFAULT_MAX_BYTES = 64 * 1024;

    private LogReader() {
    }

    /** Up to {@code maxBytes} from {@code offset}; a file that does not exist yet reads as empty. */
    public static Chunk read(Path file, long offset, int maxBytes) throws IOException {
        if (offset < 0) throw new IllegalArgumentException("offset must be >= 0, got " + offset);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (offset >= size) return new Chunk(offset, new byte[0], offset, true);
            int n = (int) Math.min(maxBytes, size - offset);
            ByteBuffer buf = ByteBuffer.allocate(n);
            while (buf.hasRemaining()) {
                if (ch.read(buf, offset + buf.position()) < 0) break;
            }
            byte[] data = new byte[buf.position()];
            buf.flip().get(data);
            long next = offset + data.length;
            return new Chunk(offset, data, next, next >= size);
        } catch (NoSuchFileException e) {
            return new Chunk(offset, new byte[0], offset, true);
        }
    }

    /**
     * Feeds {@code sink} every new chunk from {@code offset} on, polling every {@code poll}, until
     * {@code finished} is true and the file has been read to its end after that. Returns the final offset.
     */
    public static long follow(Path file, long offset, BooleanSupplier finished, Consumer<Chunk> sink, Duration poll)
            throws IOException, InterruptedException {
        long at = offset;
        while (true) {
            boolean done = finished.getAsBoolean(); // asked before reading: output written before the end is not missed
            Chunk c;
            do {
                c = read(file, at, DEFAULT_MAX_BYTES);
                if (c.data().length > 0) sink.accept(c);
                at = c.nextOffset();
            } while (!c.atEnd());
            if (done) return at;
            Thread.sleep(poll.toMillis());
        }
    }
}
