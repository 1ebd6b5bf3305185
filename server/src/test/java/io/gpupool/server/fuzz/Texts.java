package io.gpupool.server.fuzz;

import java.nio.charset.StandardCharsets;
import java.util.Random;

/** Random text and percent-encoding for the fuzzer. */
final class Texts {
    private Texts() {}

    /** Printable ASCII mixed with anything in the BMP and beyond (controls, surrogate pairs, right-to-left). */
    static String unicode(Random rnd, int len) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < len; i++) {
            switch (rnd.nextInt(8)) {
                case 0 -> sb.append((char) rnd.nextInt(0x20));
                case 1 -> sb.appendCodePoint(0x80 + rnd.nextInt(0xd800 - 0x80));
                case 2 -> sb.appendCodePoint(0x10000 + rnd.nextInt(0x10000));
                default -> sb.append((char) (0x20 + rnd.nextInt(95)));
            }
        }
        return sb.toString();
    }

    /** Letters and digits only: a value that needs no encoding anywhere. */
    static String word(Random rnd, int len) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < len; i++) sb.append("abcdefghijklmnopqrstuvwxyz0123456789".charAt(rnd.nextInt(36)));
        return sb.toString();
    }

    /** Every byte outside unreserved characters as %XX of its UTF-8 (so '/' becomes %2F). */
    static String encode(String s) {
        StringBuilder sb = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~') sb.append((char) c);
            else sb.append('%').append(String.format("%02X", c));
        }
        return sb.toString();
    }

    /** Whether every %XX is two hex digits and the bytes they make are UTF-8. */
    static boolean percentEncodedUtf8(String s) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) != '%') {
                bytes.write(s.charAt(i) & 0x7f);
                continue;
            }
            if (i + 2 >= s.length() || !s.substring(i + 1, i + 3).matches("[0-9A-Fa-f]{2}")) return false;
            bytes.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
            i += 2;
        }
        try {
            StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(bytes.toByteArray()));
            return true;
        } catch (java.nio.charset.CharacterCodingException e) {
            return false;
        }
    }
}
