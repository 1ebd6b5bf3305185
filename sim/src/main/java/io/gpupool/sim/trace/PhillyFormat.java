package io.gpupool.sim.trace;

import io.gpupool.model.JobSpec;

/**
 * The Philly job table (Microsoft, 2017; msr-fiddle/philly-traces, as distilled by the Pollux artifact):
 * {@code timestamp,duration,num_gpus,gpu_time,cluster}. {@code timestamp} is the submit time as
 * {@code YYYY-MM-DD HH:MM:SS} (UTC); submit times count in seconds from the earliest row. Rows are not
 * sorted. The virtual cluster ({@code cluster}) is the tenant. Jobs have no id: {@code philly-LINE}.
 */
public final class PhillyFormat implements TraceFormat {
    @Override public String name() { return "philly"; }

    @Override public boolean mapsRowsIndependently() { return true; }

    @Override
    public String description() {
        return "Philly job table: timestamp (YYYY-MM-DD HH:MM:SS),duration (s),num_gpus,gpu_time,cluster (tenant)";
    }

    @Override
    public RowMapper bind(Columns columns, TraceContext context) {
        columns.require("timestamp", "duration", "num_gpus");
        return new RowMapper() {
            @Override
            public TraceJob map(Row row, long shiftMs) {
                long submitMs = timestampMs(row, "timestamp");
                double duration = row.number("duration", 1e-3, 1e12);
                int gpus = (int) row.integer("num_gpus", 1, 100_000);
                JobSpec.Builder b = JobSpec.builder("philly-" + row.line())
                        .submitMs(submitMs - shiftMs)
                        .shape(context.shapeFor(gpus));
                String vc = row.optional("cluster");
                if (vc != null) b.tenant(vc);
                return GpupoolCsvFormat.build(row, b, duration);
            }

            @Override public boolean relativeToFirstSubmit() { return true; }
        };
    }

    /** {@code YYYY-MM-DD HH:MM:SS} as epoch milliseconds (UTC), checked field by field. */
    static long timestampMs(Row row, String column) {
        String v = row.required(column);
        if (v.length() != 19 || v.charAt(4) != '-' || v.charAt(7) != '-' || (v.charAt(10) != ' ' && v.charAt(10) != 'T')
                || v.charAt(13) != ':' || v.charAt(16) != ':') {
            throw row.error(column, badTime(v));
        }
        int year = digits(v, 0, 4), month = digits(v, 5, 7), day = digits(v, 8, 10);
        int hour = digits(v, 11, 13), minute = digits(v, 14, 16), second = digits(v, 17, 19);
        if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)
                || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
            throw row.error(column, badTime(v));
        }
        return ((epochDay(year, month, day) * 24 + hour) * 60 + minute) * 60_000L + second * 1000L;
    }

    /** The rule a bad timestamp breaks (made only when one is bad: this runs for every row). */
    private static String badTime(String v) {
        return "must be a time YYYY-MM-DD HH:MM:SS, got '" + v + "'";
    }

    private static int daysInMonth(int year, int month) {
        boolean leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        return month == 2 ? (leap ? 29 : 28) : month == 4 || month == 6 || month == 9 || month == 11 ? 30 : 31;
    }

    /** Days since 1970-01-01 of a proleptic Gregorian date (the days-from-civil algorithm; no objects per row). */
    static long epochDay(int year, int month, int day) {
        long y = month <= 2 ? year - 1 : year;
        long era = Math.floorDiv(y, 400);
        long yoe = y - era * 400;
        long doy = (153L * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
        long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146_097 + doe - 719_468;
    }

    private static int digits(String s, int from, int to) {
        int n = 0;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') return -1;
            n = n * 10 + (c - '0');
        }
        return n;
    }
}
