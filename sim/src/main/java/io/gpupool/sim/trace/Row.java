package io.gpupool.sim.trace;

import io.gpupool.model.SpecException;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One data row of a CSV trace with typed, checked access by column name. Every failure is a
 * {@link SpecException} naming file:line, the column and the rule broken.
 */
public final class Row {
    private final String file;
    private final int line;
    private final String[] fields;
    private final Columns columns;
    private String ignoredReason;

    Row(String file, int line, String[] fields, Columns columns) {
        this.file = file;
        this.line = line;
        this.fields = fields;
        this.columns = columns;
    }

    /** file:line of this row. */
    public String where() { return file + ":" + line; }

    /** The row's line number in its file (1 = the header). */
    public int line() { return line; }

    /** Marks a valid row that is not a GPU job (a CPU-only pod, a task that never ran): counted, not replayed. */
    public TraceJob ignore(String reason) {
        ignoredReason = reason;
        return null;
    }

    String ignoredReason() { return ignoredReason; }

    /** The trimmed value, or null when the column is absent or the cell empty. */
    public String optional(String column) {
        int i = columns.indexOf(column);
        if (i < 0 || i >= fields.length) return null;
        String v = fields[i].trim();
        return v.isEmpty() ? null : v;
    }

    public String required(String column) {
        String v = optional(column);
        if (v == null) throw error(column, "required value is empty");
        return v;
    }

    /** A decimal number in [min, max]. */
    public double number(String column, double min, double max) {
        return checkRange(column, parseDouble(column, required(column)), min, max);
    }

    public double optionalNumber(String column, double min, double max, double dflt) {
        String v = optional(column);
        return v == null ? dflt : checkRange(column, parseDouble(column, v), min, max);
    }

    /** An integer in [min, max]. */
    public long integer(String column, long min, long max) {
        return parseLong(column, required(column), min, max);
    }

    public long optionalInteger(String column, long min, long max, long dflt) {
        String v = optional(column);
        return v == null ? dflt : parseLong(column, v, min, max);
    }

    public boolean bool(String column, boolean dflt) {
        String v = optional(column);
        if (v == null) return dflt;
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes" -> true;
            case "false", "0", "no" -> false;
            default -> throw error(column, "must be true or false, got '" + v + "'");
        };
    }

    /** A bad value in this row: file:line, the column, the rule. */
    public SpecException error(String column, String rule) {
        return new SpecException(where(), column, rule);
    }

    /** A rule of the model (naming one of this row's columns) that this row's values break, at file:line. */
    public SpecException error(SpecException broken) {
        return new SpecException(where(), broken.field(), broken.rule());
    }

    private double parseDouble(String column, String v) {
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw error(column, "must be a number, got '" + v + "'");
        }
    }

    private double checkRange(String column, double d, double min, double max) {
        if (!(d >= min)) throw error(column, "must be >= " + fmt(min) + ", got " + fmt(d));
        if (!(d <= max)) throw error(column, "must be <= " + fmt(max) + ", got " + fmt(d));
        return d;
    }

    private long parseLong(String column, String v, long min, long max) {
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw error(column, "must be an integer, got '" + v + "'");
        }
        if (n < min || n > max) throw error(column, "must be in " + min + ".." + max + ", got " + v);
        return n;
    }

    private static String fmt(double d) {
        return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
    }

    /** Splits one CSV line (RFC 4180 quotes, no embedded newlines). */
    static String[] split(String line) {
        if (line.indexOf('"') < 0) {
            int n = 1;
            for (int i = line.indexOf(','); i >= 0; i = line.indexOf(',', i + 1)) n++;
            String[] out = new String[n];
            int from = 0;
            for (int k = 0; k < n - 1; k++) {
                int comma = line.indexOf(',', from);
                out[k] = line.substring(from, comma);
                from = comma + 1;
            }
            out[n - 1] = line.substring(from);
            return out;
        }
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') { cur.append('"'); i++; }
                else if (c == '"') quoted = false;
                else cur.append(c);
            } else if (c == '"') quoted = true;
            else if (c == ',') { out.add(cur.toString()); cur.setLength(0); }
            else cur.append(c);
        }
        out.add(cur.toString());
        return out.toArray(String[]::new);
    }
}
