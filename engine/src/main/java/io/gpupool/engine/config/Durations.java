package io.gpupool.engine.config;

import io.gpupool.model.SpecException;

import java.util.Locale;

/** Durations as people write them: {@code 500ms}, {@code 90s}, {@code 30m}, {@code 1.5h}, {@code 1d}, or plain seconds. */
public final class Durations {
    private static final long[] UNIT_MS = {86_400_000L, 3_600_000L, 60_000L, 1000L, 1L};
    private static final String[] UNIT = {"d", "h", "m", "s", "ms"};

    private Durations() {}

    /** Milliseconds, or -1 when the text is not a positive duration. */
    public static long parseMs(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        long unit = 1000;
        if (t.endsWith("ms")) { unit = 1; t = t.substring(0, t.length() - 2); }
        else if (t.endsWith("s")) t = t.substring(0, t.length() - 1);
        else if (t.endsWith("m")) { unit = 60_000; t = t.substring(0, t.length() - 1); }
        else if (t.endsWith("h")) { unit = 3_600_000; t = t.substring(0, t.length() - 1); }
        else if (t.endsWith("d")) { unit = 86_400_000; t = t.substring(0, t.length() - 1); }
        try {
            double v = Double.parseDouble(t);
            if (v > 0 && v * unit < Long.MAX_VALUE / 4 && Math.round(v * unit) > 0) return Math.round(v * unit);
        } catch (NumberFormatException ignored) {
            // -1 below: the caller says what is accepted
        }
        return -1;
    }

    /** As {@link #parseMs(String)}; a {@link SpecException} at {@code where}/{@code field} when it is not one. */
    public static long parseMs(String text, String where, String field) {
        long ms = parseMs(text);
        if (ms < 0) throw new SpecException(where, field, rule(text));
        return ms;
    }

    static String rule(String text) {
        return "must be a positive duration like 90s, 30m, 1h or 1d, got '" + text + "'";
    }

    /** The shortest exact form in the largest whole unit: {@code 3600000} is {@code 1h}, {@code 90000} is {@code 90s}. */
    public static String format(long ms) {
        for (int i = 0; i < UNIT_MS.length; i++) {
            if (ms % UNIT_MS[i] == 0) return ms / UNIT_MS[i] + UNIT[i];
        }
        throw new IllegalStateException("unreachable: every whole number of ms is a whole number of ms");
    }
}
