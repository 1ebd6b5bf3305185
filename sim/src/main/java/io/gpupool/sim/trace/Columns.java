package io.gpupool.sim.trace;

import io.gpupool.model.SpecException;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/** The header row of a CSV trace: column name (lower case) to index. */
public final class Columns {
    private final Map<String, Integer> index = new HashMap<>();
    private final String header;
    private final String where;

    Columns(String header, String where) {
        this.header = header;
        this.where = where;
        String[] names = Row.split(header);
        // interned: the formats ask by literal names, which the map then matches by identity (a look-up per cell of every row)
        for (int i = 0; i < names.length; i++) index.putIfAbsent(names[i].trim().toLowerCase(Locale.ROOT).intern(), i);
    }

    public int indexOf(String column) {
        Integer i = index.get(column);
        return i == null ? -1 : i;
    }

    public boolean has(String column) {
        return index.containsKey(column);
    }

    /** Fails, naming the header line, when a column the format needs is missing. */
    public void require(String... columns) {
        for (String c : columns) {
            if (!has(c)) throw new SpecException(where, c, "required column missing; header is '" + header + "'");
        }
    }
}
