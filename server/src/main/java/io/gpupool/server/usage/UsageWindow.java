package io.gpupool.server.usage;

import io.gpupool.server.core.ServiceException;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The time window [since, until) of a usage query. A bound is epoch milliseconds, an ISO-8601 instant
 * ({@code 2026-12-01T00:00:00Z}), a UTC date ({@code 2026-12-01}: its midnight) or an age before now
 * ({@code 30d}, {@code 12h}, {@code 90m}, {@code 45s}). Defaults: until now, since 30 days before until.
 */
public record UsageWindow(long sinceMs, long untilMs) {
    public static final long DEFAULT_SPAN_MS = 30L * 86_400_000;
    private static final Pattern AGE = Pattern.compile("(\\d{1,9})([dhms])");

    /** @throws ServiceException (400) naming the parameter when a bound cannot be read or since is not before until */
    public static UsageWindow parse(String since, String until, long now) {
        long u = blank(until) ? now : bound("until", until, now);
        long s = blank(since) ? u - DEFAULT_SPAN_MS : bound("since", since, now);
        if (s >= u) throw ServiceException.malformed("since", "must be before until (" + Instant.ofEpochMilli(u) + "), got " + Instant.ofEpochMilli(s));
        return new UsageWindow(s, u);
    }

    private static boolean blank(String s) {
        return s == null || s.isEmpty();
    }

    static long bound(String name, String value, long now) {
        String v = value.trim().toLowerCase(Locale.ROOT);
        Matcher age = AGE.matcher(v);
        if (age.matches()) {
            long n = Long.parseLong(age.group(1));
            long unit = switch (age.group(2)) {
                case "d" -> 86_400_000L;
                case "h" -> 3_600_000L;
                case "m" -> 60_000L;
                default -> 1000L;
            };
            return now - n * unit;
        }
        if (v.matches("\\d{1,15}")) return Long.parseLong(v);
        try {
            if (v.length() == 10) return LocalDate.parse(v).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
            return Instant.parse(value.trim()).toEpochMilli();
        } catch (DateTimeParseException | ArithmeticException e) {
            throw ServiceException.malformed(name, "must be epoch milliseconds, an ISO-8601 instant (2026-12-01T00:00:00Z), a date (2026-12-01) "
                    + "or an age (30d, 12h, 90m, 45s), got '" + (value.length() > 40 ? value.substring(0, 40) + "..." : value) + "'");
        }
    }
}
