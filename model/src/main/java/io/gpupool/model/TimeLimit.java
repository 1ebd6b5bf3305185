package io.gpupool.model;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A job's time limit written the way Slurm's {@code --time} takes it: {@code MINUTES}, {@code MINUTES:SECONDS},
 * {@code HOURS:MINUTES:SECONDS}, {@code DAYS-HOURS}, {@code DAYS-HOURS:MINUTES} or {@code DAYS-HOURS:MINUTES:SECONDS}.
 * A limit is whole seconds, more than 0 and at most {@link #MAX_SECONDS} (Slurm's "0 = unlimited" is not taken: no
 * limit is no field).
 */
public final class TimeLimit {
    /** 365 days: far beyond any real limit, small enough that milliseconds never overflow. */
    public static final long MAX_SECONDS = 365L * 24 * 3600;
    private static final Pattern CLOCK = Pattern.compile("(\\d{1,9})(?::(\\d{1,2}))?(?::(\\d{1,2}))?");
    private static final Pattern DAYS = Pattern.compile("(\\d{1,4})-(\\d{1,2})(?::(\\d{1,2}))?(?::(\\d{1,2}))?");

    private TimeLimit() {}

    /**
     * The limit in seconds.
     *
     * @throws SpecException naming {@code where} and {@code field} for a text in none of the formats, 0, or over the maximum
     */
    public static long parseSeconds(String where, String field, String text) {
        String t = text == null ? "" : text.strip();
        long seconds;
        Matcher d = DAYS.matcher(t);
        Matcher c = CLOCK.matcher(t);
        if (d.matches()) {
            long hours = part(d, 2, 23, where, field, t);
            seconds = Long.parseLong(d.group(1)) * 86_400 + hours * 3600 + part(d, 3, 59, where, field, t) * 60 + part(d, 4, 59, where, field, t);
        } else if (c.matches()) {
            long first = Long.parseLong(c.group(1));
            if (c.group(3) != null) {        // HOURS:MINUTES:SECONDS
                seconds = first * 3600 + part(c, 2, 59, where, field, t) * 60 + part(c, 3, 59, where, field, t);
            } else if (c.group(2) != null) { // MINUTES:SECONDS
                seconds = first * 60 + part(c, 2, 59, where, field, t);
            } else {                         // MINUTES
                seconds = first * 60;
            }
        } else {
            throw new SpecException(where, field, "'" + clip(t) + "' is not a time limit; use MINUTES, MINUTES:SECONDS, "
                    + "HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES or DAYS-HOURS:MINUTES:SECONDS");
        }
        if (seconds <= 0) throw new SpecException(where, field, "must be more than 0 seconds, got '" + clip(t) + "'");
        if (seconds > MAX_SECONDS) throw new SpecException(where, field, "must be at most 365 days, got '" + clip(t) + "'");
        return seconds;
    }

    /** The canonical form: {@code HH:MM:SS}, with {@code D-} in front from one day on (parses back to the same seconds). */
    public static String format(long seconds) {
        long days = seconds / 86_400, rest = seconds % 86_400;
        String clock = String.format("%02d:%02d:%02d", rest / 3600, rest % 3600 / 60, rest % 60);
        return days > 0 ? days + "-" + clock : clock;
    }

    private static long part(Matcher m, int group, int max, String where, String field, String text) {
        if (m.group(group) == null) return 0;
        long v = Long.parseLong(m.group(group));
        if (v > max) throw new SpecException(where, field, "'" + clip(text) + "': a part after the first must be at most " + max + ", got " + v);
        return v;
    }

    private static String clip(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }
}
