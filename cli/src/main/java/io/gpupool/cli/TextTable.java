package io.gpupool.cli;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A plain-text table for the console: a header row, a rule of dashes, then the rows; columns two spaces
 * apart, sized to their widest cell. Columns are left-aligned unless marked with {@link #alignRight}.
 */
public final class TextTable {
    private final String[] headers;
    private final boolean[] right;
    private final List<String[]> rows = new ArrayList<>();

    public TextTable(String... headers) {
        this.headers = headers.clone();
        this.right = new boolean[headers.length];
    }

    /** Right-align the given (zero-based) columns: numbers. */
    public TextTable alignRight(int... columns) {
        for (int c : columns) right[c] = true;
        return this;
    }

    public TextTable row(Object... cells) {
        if (cells.length != headers.length) {
            throw new IllegalArgumentException("row has " + cells.length + " cells, table has " + headers.length + " columns");
        }
        rows.add(Arrays.stream(cells).map(c -> c == null ? "" : String.valueOf(c)).toArray(String[]::new));
        return this;
    }

    public String render() {
        int[] width = new int[headers.length];
        for (int i = 0; i < headers.length; i++) {
            width[i] = headers[i].length();
            for (String[] r : rows) width[i] = Math.max(width[i], r[i].length());
        }
        StringBuilder sb = new StringBuilder();
        line(sb, headers, width);
        String[] rule = new String[headers.length];
        for (int i = 0; i < rule.length; i++) rule[i] = "-".repeat(width[i]);
        line(sb, rule, width);
        for (String[] r : rows) line(sb, r, width);
        return sb.toString();
    }

    private void line(StringBuilder sb, String[] cells, int[] width) {
        StringBuilder l = new StringBuilder();
        for (int i = 0; i < cells.length; i++) {
            if (i > 0) l.append("  ");
            String pad = " ".repeat(width[i] - cells[i].length());
            l.append(right[i] ? pad + cells[i] : cells[i] + pad);
        }
        sb.append(l.toString().stripTrailing()).append('\n');
    }

    /** A number without a useless fraction: 125, 989.4, 362.05. */
    public static String number(double value) {
        if (value == Math.rint(value) && Math.abs(value) < 1e15) return Long.toString((long) value);
        return BigDecimal.valueOf(value).stripTrailingZeros().toPlainString();
    }
}
