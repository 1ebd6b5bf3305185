package io.gpupool.predict.sizing;

import java.util.Locale;

/** How the advisor prints sizes and times. Sizes are binary (GiB = 2^30 bytes), as nvidia-smi's MiB are. */
public final class Units {
    static final double MIB = 1024.0 * 1024;
    static final double GIB = MIB * 1024;

    private Units() {}

    public static String gib(double bytes) {
        if (Math.abs(bytes) < GIB) return String.format(Locale.ROOT, "%.1f MiB", bytes / MIB);
        return String.format(Locale.ROOT, "%.2f GiB", bytes / GIB);
    }

    public static String num(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) return String.format(Locale.ROOT, "%,d", (long) v);
        return String.format(Locale.ROOT, "%.4g", v);
    }

    public static String seconds(double s) {
        if (s < 1) return String.format(Locale.ROOT, "%.1f ms", s * 1000);
        if (s < 120) return String.format(Locale.ROOT, "%.2f s", s);
        return String.format(Locale.ROOT, "%.1f min", s / 60);
    }
}
