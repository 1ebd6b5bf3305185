package io.gpupool.agent.confine;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.util.Map;

/**
 * Linux errno values by name, so a kernel refusal reads "EBUSY (Device or resource busy)" next to the file or call
 * involved rather than as a bare number. Only the codes cgroup and bpf(2) calls return are listed; the numbers are
 * the generic ones (x86-64 and arm64 share them).
 */
final class Errno {

    record Code(int number, String name, String text) {}

    private static final Map<Integer, Code> BY_NUMBER;
    private static final Map<String, Code> BY_TEXT;

    static {
        Code[] codes = {
                new Code(1, "EPERM", "Operation not permitted"),
                new Code(2, "ENOENT", "No such file or directory"),
                new Code(3, "ESRCH", "No such process"),
                new Code(4, "EINTR", "Interrupted system call"),
                new Code(5, "EIO", "Input/output error"),
                new Code(6, "ENXIO", "No such device or address"),
                new Code(7, "E2BIG", "Argument list too long"),
                new Code(9, "EBADF", "Bad file descriptor"),
                new Code(11, "EAGAIN", "Resource temporarily unavailable"),
                new Code(12, "ENOMEM", "Cannot allocate memory"),
                new Code(13, "EACCES", "Permission denied"),
                new Code(14, "EFAULT", "Bad address"),
                new Code(16, "EBUSY", "Device or resource busy"),
                new Code(17, "EEXIST", "File exists"),
                new Code(19, "ENODEV", "No such device"),
                new Code(20, "ENOTDIR", "Not a directory"),
                new Code(22, "EINVAL", "Invalid argument"),
                new Code(24, "EMFILE", "Too many open files"),
                new Code(28, "ENOSPC", "No space left on device"),
                new Code(30, "EROFS", "Read-only file system"),
                new Code(38, "ENOSYS", "Function not implemented"),
                new Code(39, "ENOTEMPTY", "Directory not empty"),
                new Code(95, "EOPNOTSUPP", "Operation not supported"),
        };
        java.util.HashMap<Integer, Code> n = new java.util.HashMap<>();
        java.util.HashMap<String, Code> t = new java.util.HashMap<>();
        for (Code c : codes) {
            n.put(c.number(), c);
            t.put(c.text(), c);
        }
        BY_NUMBER = Map.copyOf(n);
        BY_TEXT = Map.copyOf(t);
    }

    private Errno() {
    }

    /** "EPERM (Operation not permitted)", or "errno 123" for a code not listed. */
    static String describe(int errno) {
        Code c = BY_NUMBER.get(errno);
        return c == null ? "errno " + errno : c.name() + " (" + c.text() + ")";
    }

    /**
     * The JDK reports a failed file operation with strerror's text only ("Device or resource busy"): this adds the
     * errno name back. Other messages pass unchanged.
     */
    static String describe(IOException e) {
        // the JDK turns these errnos into exception types without a reason text
        if (e instanceof java.nio.file.NoSuchFileException) return describe(2);
        if (e instanceof java.nio.file.AccessDeniedException) return describe(13);
        if (e instanceof java.nio.file.FileAlreadyExistsException) return describe(17);
        if (e instanceof java.nio.file.DirectoryNotEmptyException) return describe(39);
        String m = e instanceof FileSystemException f && f.getReason() != null ? f.getReason() : e.getMessage();
        if (m == null) return e.getClass().getSimpleName();
        Code c = BY_TEXT.get(m.trim());
        return c == null ? m : c.name() + " (" + c.text() + ")";
    }
}
