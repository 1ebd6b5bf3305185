package io.gpupool.server.usage;

import io.gpupool.store.UsageGrantRow;
import io.gpupool.store.UsageStore;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A usage report over a window, grouped by tenant, user, GPU model, node, UTC day or UTC hour (docs/contracts.md,
 * "Usage"). Allocated GPU- and memory-time are the stored grants clipped to the window, to the millisecond; used
 * GPU-time and energy are the stored measurements, taken in proportion to the part of each grant's metered span that
 * falls in the window (exact when the window holds the whole span). Jobs count where they ended (by day: the day;
 * by node or model: every node or model their attempts ran on; jobs that never ran appear in no node or model).
 */
public final class UsageReport {
    public enum By {
        TENANT, USER, MODEL, NODE, DAY, HOUR;

        public String wire() { return name().toLowerCase(Locale.ROOT); }

        public static By parse(String s) {
            if (s == null || s.isEmpty()) return TENANT;
            for (By b : values()) if (b.wire().equals(s)) return b;
            throw io.gpupool.server.core.ServiceException.malformed("by", "must be one of tenant, user, model, node, day, hour; got '"
                    + (s.length() > 40 ? s.substring(0, 40) + "..." : s) + "'");
        }
    }

    /** Wait from submission to first start, in seconds, over the jobs that ended in the window after starting. */
    public record Waits(int count, double p50, double p90, double p99, double max) {}

    /** One group's figures. */
    public record Figures(String key, double gpuSecondsAllocated, double gpuHoursAllocated, double gpuSecondsUsed, double gpuHoursUsed,
                          double gpuMemoryGibHours, double energyJoules, double energyKwh, Map<String, Long> jobs, Waits waitSeconds) {}

    /** The report: the window, the grouping, one entry per group (in key order) and the total. */
    public record Report(String since, String until, String by, String tenant, List<Figures> groups, Figures total) {}

    private static final class Sums {
        double allocMs, usedMs, memMibMs, joules;
        final Map<String, Long> jobs = new TreeMap<>();
        final List<Long> waitsMs = new ArrayList<>();

        Figures figures(String key) {
            double alloc = allocMs / 1000.0;
            double used = usedMs / 1000.0;
            return new Figures(key, alloc, alloc / 3600, used, used / 3600, memMibMs / 1024.0 / 3_600_000.0, joules, joules / 3.6e6,
                    java.util.Collections.unmodifiableSortedMap(new TreeMap<>(jobs)), waits(waitsMs));
        }
    }

    private UsageReport() {}

    /**
     * @param tenant only this tenant's usage (a member's own), or null for all
     * @param now    open grants count as held up to now
     */
    public static Report build(UsageStore store, UsageWindow w, By by, String tenant, long now) {
        Map<String, Sums> groups = new TreeMap<>();
        Sums total = new Sums();
        for (UsageGrantRow g : store.grants(w.sinceMs(), w.untilMs(), tenant)) {
            long end = g.endedMs() != null ? g.endedMs() : Math.max(g.startedMs(), now);
            for (long[] piece : pieces(by, Math.max(g.startedMs(), w.sinceMs()), Math.min(end, w.untilMs()))) {
                Sums s = groups.computeIfAbsent(by == By.DAY ? day(piece[0]) : by == By.HOUR ? hour(piece[0]) : key(by, g), k -> new Sums());
                add(s, g, piece[0], piece[1]);
                add(total, g, piece[0], piece[1]);
            }
        }
        for (UsageStore.EndedJob j : store.endedJobs(w.sinceMs(), w.untilMs(), tenant)) {
            Long wait = j.firstStartedMs() == null ? null : Math.max(0, j.firstStartedMs() - j.end().submittedMs());
            for (String k : keys(by, j)) count(groups.computeIfAbsent(k, x -> new Sums()), j.end().state(), wait);
            count(total, j.end().state(), wait);
        }
        List<Figures> out = new ArrayList<>();
        groups.forEach((k, s) -> out.add(s.figures(k)));
        return new Report(Instant.ofEpochMilli(w.sinceMs()).toString(), Instant.ofEpochMilli(w.untilMs()).toString(), by.wire(), tenant,
                out, total.figures("total"));
    }

    /** The grant's time in [from, to): allocated exactly, measurements in proportion to the metered span. */
    private static void add(Sums s, UsageGrantRow g, long from, long to) {
        if (to <= from) return;
        s.allocMs += g.milli() / 1000.0 * (to - from);
        s.memMibMs += (double) g.memoryMib() * (to - from);
        long metered = g.meteredUntilMs() - g.startedMs();
        if (metered <= 0) return;
        long in = Math.min(to, g.meteredUntilMs()) - from;
        if (in <= 0) return;
        double part = (double) in / metered;
        s.usedMs += g.usedGpuMs() * part;
        s.joules += g.energyJ() * part;
    }

    private static void count(Sums s, String state, Long waitMs) {
        s.jobs.merge(state, 1L, Long::sum);
        if (waitMs != null) s.waitsMs.add(waitMs);
    }

    /** [from, to) as one piece, or cut at UTC midnights for by=day and at full hours for by=hour. */
    private static List<long[]> pieces(By by, long from, long to) {
        List<long[]> out = new ArrayList<>();
        if (to <= from) return out;
        if (by != By.DAY && by != By.HOUR) {
            out.add(new long[] {from, to});
            return out;
        }
        long at = from;
        while (at < to) {
            long cut = by == By.HOUR ? Math.floorDiv(at, HOUR_MS) * HOUR_MS + HOUR_MS
                    : LocalDate.ofInstant(Instant.ofEpochMilli(at), ZoneOffset.UTC).plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
            long next = Math.min(to, cut);
            out.add(new long[] {at, next});
            at = next;
        }
        return out;
    }

    private static final long HOUR_MS = 3_600_000L;

    /** The UTC hour a time falls in, as 2026-12-04T05:00Z (sorts in time order). */
    private static String hour(long ms) {
        return Instant.ofEpochMilli(Math.floorDiv(ms, HOUR_MS) * HOUR_MS).toString().replace(":00:00Z", ":00Z");
    }

    private static String day(long ms) {
        return LocalDate.ofInstant(Instant.ofEpochMilli(ms), ZoneOffset.UTC).toString();
    }

    private static String key(By by, UsageGrantRow g) {
        return switch (by) {
            case TENANT -> g.tenant();
            case USER -> userKey(g.user());
            case MODEL -> g.gpuModel();
            case NODE -> g.node();
            case DAY, HOUR -> throw new IllegalArgumentException("by day and by hour are cut by time");
        };
    }

    private static Set<String> keys(By by, UsageStore.EndedJob j) {
        return switch (by) {
            case TENANT -> Set.of(j.end().tenant());
            case USER -> Set.of(userKey(j.end().user()));
            case MODEL -> j.gpuModels();
            case NODE -> j.nodes();
            case DAY -> Set.of(day(j.end().endedMs()));
            case HOUR -> Set.of(hour(j.end().endedMs()));
        };
    }

    /** Jobs submitted without a user field group under "(none)". */
    private static String userKey(String user) {
        return user.isEmpty() ? "(none)" : user;
    }

    /** Nearest-rank percentiles, in seconds. */
    static Waits waits(List<Long> ms) {
        if (ms.isEmpty()) return new Waits(0, 0, 0, 0, 0);
        List<Long> sorted = ms.stream().sorted().toList();
        return new Waits(sorted.size(), rank(sorted, 0.50), rank(sorted, 0.90), rank(sorted, 0.99), sorted.getLast() / 1000.0);
    }

    private static double rank(List<Long> sorted, double p) {
        int i = (int) Math.ceil(p * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i))) / 1000.0;
    }
}
