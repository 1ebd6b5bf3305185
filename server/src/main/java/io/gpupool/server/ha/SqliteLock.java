package io.gpupool.server.ha;

import io.gpupool.model.SpecException;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * SQLite serves one server: a second server on the same database file would be a second writer with its own engine.
 * The first holds an exclusive lock on {@code FILE.lock} beside the database for as long as it runs (the kernel drops
 * it when the process dies, however it dies); a second is refused at start with one line.
 */
public final class SqliteLock implements AutoCloseable {
    private final FileChannel channel;
    private final FileLock lock;

    private SqliteLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** Locks {@code dbFile}'s lock file, or fails naming the file and what to do. */
    public static SqliteLock acquire(Path dbFile) {
        Path lockFile = dbFile.resolveSibling(dbFile.getFileName() + ".lock");
        FileChannel ch = null;
        try {
            ch = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock l = ch.tryLock();
            if (l != null) return new SqliteLock(ch, l);
        } catch (OverlappingFileLockException e) {
            // held by this very process
        } catch (IOException e) {
            close(ch);
            throw new SpecException("--data", "data", "cannot lock " + lockFile + ": " + e.getMessage());
        }
        close(ch);
        throw new SpecException("--data", "data", "another gpupool server already uses the SQLite database " + dbFile + " (it holds " + lockFile
                + "); SQLite serves one server: for several replicas use PostgreSQL (--db jdbc:postgresql://...)");
    }

    private static void close(FileChannel ch) {
        if (ch == null) return;
        try {
            ch.close();
        } catch (IOException ignored) {
            // nothing to release
        }
    }

    @Override
    public void close() {
        try {
            lock.release();
        } catch (IOException ignored) {
            // closing the channel releases it too
        }
        close(channel);
    }
}
