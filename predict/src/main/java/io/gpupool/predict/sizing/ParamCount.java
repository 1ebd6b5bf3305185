package io.gpupool.predict.sizing;

import io.gpupool.model.SpecException;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses a parameter count as people write it: {@code 7B}, {@code 1.3b}, {@code 350M}, {@code 70e9}, {@code 7000000000}. */
public final class ParamCount {
    private static final Pattern FORM = Pattern.compile("(\\d+(?:\\.\\d+)?(?:e\\d+)?)\\s*([kmbt]?)");

    private ParamCount() {}

    public static long parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        Matcher m = FORM.matcher(t);
        if (!m.matches()) {
            throw new SpecException("--params", "params", "expected a count like 7B, 1.3B, 350M or 7000000000, got '" + text + "'");
        }
        double v = Double.parseDouble(m.group(1)) * switch (m.group(2)) {
            case "k" -> 1e3;
            case "m" -> 1e6;
            case "b" -> 1e9;
            case "t" -> 1e12;
            default -> 1;
        };
        if (!(v >= 1e6) || v > 1e14) {
            throw new SpecException("--params", "params", "must be between 1M and 100T parameters, got '" + text + "'");
        }
        return Math.round(v);
    }

    /** 6738415616 -> "6.74B". */
    public static String format(long params) {
        if (params >= 1e12) return trim(params / 1e12) + "T";
        if (params >= 1e9) return trim(params / 1e9) + "B";
        return trim(params / 1e6) + "M";
    }

    private static String trim(double v) {
        String s = String.format(Locale.ROOT, "%.2f", v);
        return s.replaceAll("\\.?0+$", "");
    }
}
