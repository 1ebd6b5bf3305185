package io.gpupool.server.fuzz;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.zip.GZIPOutputStream;

import static io.gpupool.server.fuzz.JsonMutator.pick;

/**
 * A JSON value as request-body bytes, mostly faithful, otherwise broken the ways text breaks: truncated,
 * trailing garbage, duplicate keys, NaN, comments, invalid UTF-8, UTF-16, a byte-order mark, gzip, padded
 * past the size limit, nested past the depth limit, or not JSON at all.
 */
final class BodyEncoder {
    /** What was sent and whether it is (still) the faithful serialization. */
    record Encoded(byte[] bytes, String how, boolean gzip) {}

    private BodyEncoder() {}

    static Encoded encode(JsonNode value, Random rnd, int limit) {
        String json = value.toString();
        byte[] utf8 = json.getBytes(StandardCharsets.UTF_8);
        if (rnd.nextInt(3) > 0) return new Encoded(utf8, "json", false);
        return switch (rnd.nextInt(20)) {
            case 0 -> new Encoded(java.util.Arrays.copyOf(utf8, rnd.nextInt(utf8.length + 1)), "truncated", false);
            case 1 -> new Encoded((json + pick(rnd, "}", "]", "garbage", ",{}", "\u0000", " {}")).getBytes(StandardCharsets.UTF_8), "trailing", false);
            case 2 -> new Encoded(json.replaceFirst("\\{\"([^\"]*)\":", "{\"$1\":0,\"$1\":").getBytes(StandardCharsets.UTF_8), "duplicate key", false);
            case 3 -> new Encoded(json.replaceFirst(":(-?\\d+)", ":" + pick(rnd, "NaN", "Infinity", "-Infinity", "+1", "01", ".5", "1.", "0x1F", "1e99999")).getBytes(StandardCharsets.UTF_8), "bad number", false);
            case 4 -> new Encoded(("/* c */" + json.replaceFirst(",", ", // c\n")).getBytes(StandardCharsets.UTF_8), "comments", false);
            case 5 -> new Encoded(json.replace('"', '\'').getBytes(StandardCharsets.UTF_8), "single quotes", false);
            case 6 -> new Encoded(insert(utf8, rnd, pick(rnd, new byte[]{(byte) 0xc3, 0x28}, new byte[]{(byte) 0xff}, new byte[]{(byte) 0xc0, (byte) 0xaf},
                    new byte[]{(byte) 0x80}, new byte[]{(byte) 0xed, (byte) 0xa0, (byte) 0x80}, new byte[]{(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80})), "invalid UTF-8", false);
            case 7 -> new Encoded(json.getBytes(pick(rnd, StandardCharsets.UTF_16, StandardCharsets.UTF_16LE, StandardCharsets.UTF_16BE)), "UTF-16", false);
            case 8 -> new Encoded(concat(new byte[]{(byte) 0xef, (byte) 0xbb, (byte) 0xbf}, utf8), "BOM", false);
            case 9 -> new Encoded(gzip(utf8), "gzip", true);
            case 10 -> new Encoded(pad(utf8, limit + 1 + rnd.nextInt(100)), "oversize", false);
            case 11 -> new Encoded(pad(utf8, Math.max(utf8.length, limit - 10)), "just under the limit", false);
            case 12 -> new Encoded(("[".repeat(pick(rnd, 33, 1000, 100_000)) + "]".repeat(rnd.nextInt(2) * 33)).getBytes(StandardCharsets.UTF_8), "deep nesting", false);
            case 13 -> {
                byte[] b = new byte[rnd.nextInt(300)];
                rnd.nextBytes(b);
                yield new Encoded(b, "binary", false);
            }
            case 14 -> new Encoded(Texts.unicode(rnd, rnd.nextInt(200)).getBytes(StandardCharsets.UTF_8), "text", false);
            case 15 -> new Encoded(pick(rnd, "", " ", "null", "[]", "{}", "0", "\"\"", "true", "{\"\":{}}", "\n\n").getBytes(StandardCharsets.UTF_8), "trivial", false);
            case 16 -> new Encoded(json.replaceFirst("\"([^\"]*)\"", "\"$1\\\\ud800\"").getBytes(StandardCharsets.UTF_8), "lone surrogate escape", false);
            case 17 -> new Encoded(json.replaceFirst("(\\d+)", "1" + "0".repeat(pick(rnd, 30, 400, 1500))).getBytes(StandardCharsets.UTF_8), "long number", false);
            case 18 -> new Encoded(json.replaceFirst("\"([^\"]*)\":", "\"" + "k".repeat(pick(rnd, 1000, 60_000)) + "\":").getBytes(StandardCharsets.UTF_8), "long key", false);
            default -> new Encoded(json.replaceFirst(":", ":\u0001").getBytes(StandardCharsets.UTF_8), "control character", false);
        };
    }

    private static byte[] insert(byte[] b, Random rnd, byte[] what) {
        int at = rnd.nextInt(b.length + 1);
        byte[] out = new byte[b.length + what.length];
        System.arraycopy(b, 0, out, 0, at);
        System.arraycopy(what, 0, out, at, what.length);
        System.arraycopy(b, at, out, at + what.length, b.length - at);
        return out;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** Valid JSON followed by whitespace up to {@code size} bytes. */
    private static byte[] pad(byte[] json, int size) {
        byte[] out = java.util.Arrays.copyOf(json, Math.max(size, json.length));
        java.util.Arrays.fill(out, json.length, out.length, (byte) ' ');
        return out;
    }

    static byte[] gzip(byte[] b) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream z = new GZIPOutputStream(out)) {
            z.write(b);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }
}
