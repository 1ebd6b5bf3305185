package io.gpupool.sim.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.DoubleFunction;

/**
 * A small, dependency-free SVG chart: lines and filled bands over linear or logarithmic x, with axes, ticks,
 * a title and a legend. Output is plain SVG 1.1 (no scripts, no external fonts or styles), so it shows the
 * same inline in the offline HTML report, as a file in docs, and on GitHub. Deterministic: the same data
 * give the same bytes.
 */
public final class SvgChart {
    /** Tableau 10: distinguishable, also for common colour blindness. */
    static final String[] PALETTE = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

    private record Series(String name, double[] x, double[] y, double[] lower, boolean dashed, String color) {}

    private final String title;
    private final String xLabel;
    private final String yLabel;
    private final List<Series> series = new ArrayList<>();
    private boolean logX;
    private Double yMin, yMax, xMin;
    private DoubleFunction<String> xTicks = SvgChart::number;
    private DoubleFunction<String> yTicks = SvgChart::number;

    public SvgChart(String title, String xLabel, String yLabel) {
        this.title = title;
        this.xLabel = xLabel;
        this.yLabel = yLabel;
    }

    public SvgChart logX() { logX = true; return this; }

    public SvgChart yRange(double min, double max) { yMin = min; yMax = max; return this; }

    /** Start the (linear) x axis here whatever the data: charts over the same time line then align. */
    public SvgChart xFrom(double min) { xMin = min; return this; }

    public SvgChart xFormat(DoubleFunction<String> f) { xTicks = f; return this; }

    public SvgChart yFormat(DoubleFunction<String> f) { yTicks = f; return this; }

    public SvgChart line(String name, double[] x, double[] y) {
        return add(new Series(name, x, y, null, false, PALETTE[series.size() % PALETTE.length]));
    }

    public SvgChart dashed(String name, double[] x, double[] y) {
        return add(new Series(name, x, y, null, true, PALETTE[series.size() % PALETTE.length]));
    }

    /** A filled band between {@code lower} and {@code upper} (one layer of a stacked area). */
    public SvgChart band(String name, double[] x, double[] lower, double[] upper) {
        return add(new Series(name, x, upper, lower, false, PALETTE[series.size() % PALETTE.length]));
    }

    private SvgChart add(Series s) {
        if (s.x.length != s.y.length || (s.lower != null && s.lower.length != s.x.length)) throw new IllegalArgumentException("series lengths differ: " + s.name);
        series.add(s);
        return this;
    }

    // ---- rendering ------------------------------------------------------------------------------

    private static final int LEFT = 64, RIGHT = 170, TOP = 34, BOTTOM = 48;

    public String render(int width, int height) {
        double x0 = Double.MAX_VALUE, x1 = -Double.MAX_VALUE, y0 = Double.MAX_VALUE, y1 = -Double.MAX_VALUE;
        for (Series s : series) {
            for (int i = 0; i < s.x.length; i++) {
                if (logX && s.x[i] <= 0) continue;
                x0 = Math.min(x0, s.x[i]);
                x1 = Math.max(x1, s.x[i]);
                y0 = Math.min(y0, s.lower != null ? Math.min(s.lower[i], s.y[i]) : s.y[i]);
                y1 = Math.max(y1, s.y[i]);
            }
        }
        if (x0 > x1) { x0 = logX ? 1 : 0; x1 = logX ? 10 : 1; y0 = 0; y1 = 1; }
        if (yMin != null) y0 = yMin;
        else y0 = Math.min(0, y0);
        if (yMax != null) y1 = yMax;
        if (y1 <= y0) y1 = y0 + 1;
        double[] yt = niceTicks(y0, y1, 5);
        if (yMax == null) y1 = Math.max(y1, yt[yt.length - 1]);
        double[] xt;
        if (logX) {
            x0 = Math.pow(10, Math.floor(Math.log10(x0)));
            x1 = Math.pow(10, Math.ceil(Math.log10(x1)));
            if (x1 <= x0) x1 = x0 * 10;
            int decades = (int) Math.round(Math.log10(x1 / x0));
            xt = new double[decades + 1];
            for (int i = 0; i <= decades; i++) xt[i] = x0 * Math.pow(10, i);
        } else {
            if (xMin != null) x0 = Math.min(x0, xMin);
            if (x1 <= x0) x1 = x0 + 1;
            xt = niceTicks(x0, x1, 6);
        }
        Plot p = new Plot(x0, x1, y0, y1, width - LEFT - RIGHT, height - TOP - BOTTOM, logX);
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                + "font-family=\"Helvetica,Arial,sans-serif\" font-size=\"12\">\n", width, height, width, height));
        sb.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", width, height));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", LEFT, esc(title)));
        // grid and ticks
        sb.append("<g stroke=\"#e0e0e0\" stroke-width=\"1\">\n");
        for (double v : yt) if (v >= y0 && v <= y1) sb.append(hline(LEFT, width - RIGHT, TOP + p.y(v)));
        for (double v : xt) if (v >= x0 && v <= x1) sb.append(vline(LEFT + p.x(v), TOP, height - BOTTOM));
        sb.append("</g>\n<g fill=\"#333333\">\n");
        for (double v : yt) {
            if (v < y0 || v > y1) continue;
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", LEFT - 6, TOP + p.y(v) + 4, esc(yTicks.apply(v))));
        }
        for (double v : xt) {
            if (v < x0 || v > x1) continue;
            sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", LEFT + p.x(v), height - BOTTOM + 16, esc(xTicks.apply(v))));
        }
        sb.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", LEFT + p.w / 2.0, height - 10, esc(xLabel)));
        sb.append(String.format(Locale.ROOT, "<text transform=\"translate(14,%.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", TOP + p.h / 2.0, esc(yLabel)));
        sb.append("</g>\n");
        sb.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999999\"/>\n", LEFT, TOP, p.w, p.h));
        // data
        for (Series s : series) sb.append(s.lower != null ? bandPath(s, p) : linePath(s, p));
        // legend
        int ly = TOP + 4;
        for (Series s : series) {
            int lx = width - RIGHT + 12;
            if (s.lower != null) {
                sb.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"18\" height=\"10\" fill=\"%s\" fill-opacity=\"0.75\"/>\n", lx, ly, s.color));
            } else {
                sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                        lx, ly + 5, lx + 18, ly + 5, s.color, s.dashed ? " stroke-dasharray=\"5,3\"" : ""));
            }
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>\n", lx + 24, ly + 10, esc(shorten(s.name, 20))));
            ly += 18;
        }
        sb.append("</svg>\n");
        return sb.toString();
    }

    private record Plot(double x0, double x1, double y0, double y1, int w, int h, boolean log) {
        double x(double v) {
            double f = log ? (Math.log10(Math.max(v, x0)) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0)) : (v - x0) / (x1 - x0);
            return Math.max(0, Math.min(1, f)) * w;
        }

        double y(double v) {
            return (1 - Math.max(0, Math.min(1, (v - y0) / (y1 - y0)))) * h;
        }
    }

    private static String linePath(Series s, Plot p) {
        StringBuilder d = new StringBuilder();
        int[] keep = thin(s.x.length);
        for (int k = 0; k < keep.length; k++) {
            int i = keep[k];
            if (p.log && s.x[i] <= 0) continue;
            d.append(d.isEmpty() ? 'M' : 'L').append(fmt(LEFT + p.x(s.x[i]))).append(',').append(fmt(TOP + p.y(s.y[i])));
        }
        return String.format(Locale.ROOT, "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"%s><title>%s</title></path>\n",
                d, s.color, s.dashed ? " stroke-dasharray=\"5,3\"" : "", esc(s.name));
    }

    private static String bandPath(Series s, Plot p) {
        StringBuilder d = new StringBuilder();
        int[] keep = thin(s.x.length);
        // filled areas need no sub-pixel precision: whole pixels keep stacked charts small
        for (int i : keep) d.append(d.isEmpty() ? 'M' : 'L').append(Math.round(LEFT + p.x(s.x[i]))).append(',').append(Math.round(TOP + p.y(s.y[i])));
        for (int k = keep.length - 1; k >= 0; k--) {
            int i = keep[k];
            d.append('L').append(Math.round(LEFT + p.x(s.x[i]))).append(',').append(Math.round(TOP + p.y(s.lower[i])));
        }
        if (!d.isEmpty()) d.append('Z');
        return String.format(Locale.ROOT, "<path d=\"%s\" fill=\"%s\" fill-opacity=\"0.75\" stroke=\"none\"><title>%s</title></path>\n", d, s.color, esc(s.name));
    }

    /** At most 240 evenly spread points of n (files stay small; at chart size the eye sees no difference). */
    private static int[] thin(int n) {
        int m = Math.min(n, 240);
        int[] out = new int[m];
        for (int k = 0; k < m; k++) out[k] = m == n ? k : (int) Math.round(k * (n - 1) / (double) (m - 1));
        return out;
    }

    private static String hline(int xa, int xb, double y) {
        return String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", xa, y, xb, y);
    }

    private static String vline(double x, int ya, int yb) {
        return String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", x, ya, x, yb);
    }

    /** About {@code n} ticks at 1, 2 or 5 times a power of ten covering [lo, hi]. */
    static double[] niceTicks(double lo, double hi, int n) {
        double raw = (hi - lo) / Math.max(1, n);
        double mag = Math.pow(10, Math.floor(Math.log10(raw)));
        double step = raw / mag <= 1 ? mag : raw / mag <= 2 ? 2 * mag : raw / mag <= 5 ? 5 * mag : 10 * mag;
        double start = Math.floor(lo / step) * step;
        int count = (int) Math.ceil((hi - start) / step - 1e-9) + 1;
        double[] t = new double[count];
        for (int i = 0; i < count; i++) t[i] = start + i * step;
        return t;
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    static String number(double v) {
        if ((v == Math.rint(v) || Math.abs(v) >= 100) && Math.abs(v) < 1e12) return String.format(Locale.ROOT, "%,d", Math.round(v));
        if (Math.abs(v) >= 10) return String.format(Locale.ROOT, "%.1f", v);
        return String.format(Locale.ROOT, "%.2g", v);
    }

    /** Seconds as 1s, 10m, 3h, 2d (log-axis ticks of durations). */
    public static String duration(double s) {
        if (s < 60) return number(s) + "s";
        if (s < 3600) return number(Math.round(s / 60.0 * 10) / 10.0) + "m";
        if (s < 86400) return number(Math.round(s / 3600.0 * 10) / 10.0) + "h";
        return number(Math.round(s / 86400.0 * 10) / 10.0) + "d";
    }

    public static String percent(double v) {
        return number(Math.round(v * 1000) / 10.0) + "%";
    }

    private static String shorten(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max - 1) + "\u2026";
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
