package io.gpupool.predict.runtime;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Codes 0, 1, 2, ... for the values of one categorical feature (users, tenants, name templates), in order of
 * first sight, so the gradient-boosted trees can split on categories. At most {@value #MAX} values get a
 * code; later new values stay unknown, as values never seen in training are.
 */
final class CategoryCodes {
    static final int MAX = 100_000;

    private final Map<String, Integer> codes = new HashMap<>();
    private final List<String> values = new ArrayList<>();

    /** The value's code, assigning the next one to a new value; -1 when the table is full. */
    int codeOf(String value) {
        Integer c = codes.get(value);
        if (c != null) return c;
        if (values.size() >= MAX) return -1;
        codes.put(value, values.size());
        values.add(value);
        return values.size() - 1;
    }

    /** The value's code, or -1 when it has none. */
    int find(String value) {
        Integer c = codes.get(value);
        return c == null ? -1 : c;
    }

    int size() {
        return values.size();
    }

    void write(DataOutputStream out) throws IOException {
        out.writeInt(values.size());
        for (String v : values) Predictors.writeString(out, v);
    }

    static CategoryCodes read(DataInputStream in) throws IOException {
        CategoryCodes c = new CategoryCodes();
        int n = Predictors.readCount(in, MAX, "category values");
        for (int i = 0; i < n; i++) c.codeOf(Predictors.readString(in));
        return c;
    }
}
