package io.gpupool.server.api;

/** UTF-8 at a byte boundary: output is read in byte ranges, text must not end in half a character. */
final class Utf8 {
    private Utf8() {}

    /** The length of the longest prefix of {@code b} that does not end inside a multi-byte character. */
    static int completePrefix(byte[] b) {
        int n = b.length;
        // look back over at most 3 continuation bytes for the lead byte of the last character
        for (int i = n - 1; i >= Math.max(0, n - 4); i--) {
            int x = b[i] & 0xff;
            if ((x & 0xc0) == 0x80) continue; // continuation byte
            int len = x < 0x80 ? 1 : (x & 0xe0) == 0xc0 ? 2 : (x & 0xf0) == 0xe0 ? 3 : (x & 0xf8) == 0xf0 ? 4 : 1;
            return i + len <= n ? n : i;
        }
        return n;
    }
}
