package io.gpupool.engine.policy;

import io.gpupool.model.SpecException;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a record from a map of its component names (camelCase) to values, over a record of defaults, and writes
 * one back to such a map: the settings a configuration file, a JSON body or a command line gives. Components may
 * be {@code int}, {@code long}, {@code double}, {@code boolean}, {@code String} or a {@code List} of
 * {@code Double}, {@code Long} or {@code String}; a value may be given as its text (a list as comma-separated
 * text). The record's own constructor checks the values.
 */
final class ArgsBinder {
    private ArgsBinder() {}

    /** {@code defaults} with the given keys replaced; unknown keys and values of the wrong kind are errors. */
    static <R extends Record> R bind(String where, R defaults, Map<String, ?> values) {
        @SuppressWarnings("unchecked")
        Class<R> type = (Class<R>) defaults.getClass();
        RecordComponent[] parts = type.getRecordComponents();
        List<String> known = Arrays.stream(parts).map(RecordComponent::getName).toList();
        for (String key : values.keySet()) {
            if (!known.contains(key)) {
                throw new SpecException(where, key, known.isEmpty() ? "takes no settings"
                        : "unknown setting; known: " + String.join(", ", known));
            }
        }
        Object[] args = new Object[parts.length];
        for (int i = 0; i < parts.length; i++) {
            RecordComponent c = parts[i];
            args[i] = values.containsKey(c.getName()) ? convert(where, c.getName(), c.getGenericType(), values.get(c.getName())) : read(c, defaults);
        }
        try {
            Constructor<R> canonical = type.getDeclaredConstructor(Arrays.stream(parts).map(RecordComponent::getType).toArray(Class<?>[]::new));
            return canonical.newInstance(args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof SpecException s) throw new SpecException(where, s.field(), s.rule());
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new IllegalStateException(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("settings record " + type.getName() + " cannot be built", e);
        }
    }

    /** The record's components by name, in declaration order (lists copied). */
    static Map<String, Object> toMap(Record r) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (RecordComponent c : r.getClass().getRecordComponents()) {
            Object v = read(c, r);
            out.put(c.getName(), v instanceof List<?> l ? List.copyOf(l) : v);
        }
        return out;
    }

    private static Object read(RecordComponent c, Record r) {
        try {
            return c.getAccessor().invoke(r);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("settings record " + r.getClass().getName() + " cannot be read", e);
        }
    }

    private static Object convert(String where, String key, Type type, Object value) {
        if (value == null) throw new SpecException(where, key, "must have a value");
        if (type instanceof ParameterizedType p && p.getRawType() == List.class) {
            Type element = p.getActualTypeArguments()[0];
            List<?> given = value instanceof List<?> l ? l
                    : value instanceof String s ? (s.isBlank() ? List.of() : Arrays.stream(s.split(",")).map(String::trim).toList())
                    : null;
            if (given == null) throw new SpecException(where, key, "must be a list, got " + describe(value));
            List<Object> out = new ArrayList<>();
            for (int i = 0; i < given.size(); i++) out.add(convert(where, key + "[" + i + "]", element, given.get(i)));
            return out;
        }
        if (type == double.class || type == Double.class) {
            double d = number(where, key, value).doubleValue();
            if (!Double.isFinite(d)) throw new SpecException(where, key, "must be a finite number, got " + describe(value));
            return d;
        }
        if (type == long.class || type == Long.class || type == int.class || type == Integer.class) {
            BigDecimal n = number(where, key, value);
            long v;
            try {
                v = n.longValueExact();
            } catch (ArithmeticException e) {
                throw new SpecException(where, key, "must be a whole number, got " + describe(value));
            }
            if ((type == int.class || type == Integer.class) && (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE)) {
                throw new SpecException(where, key, "must be at most " + Integer.MAX_VALUE + ", got " + describe(value));
            }
            return type == long.class || type == Long.class ? (Object) v : (Object) (int) v;
        }
        if (type == boolean.class || type == Boolean.class) {
            if (value instanceof Boolean b) return b;
            if (value instanceof String s && (s.equals("true") || s.equals("false"))) return Boolean.parseBoolean(s);
            throw new SpecException(where, key, "must be true or false, got " + describe(value));
        }
        if (type == String.class) {
            if (value instanceof String s) return s;
            throw new SpecException(where, key, "must be text, got " + describe(value));
        }
        throw new IllegalStateException("settings of type " + type + " are not supported (" + where + ", " + key + ")");
    }

    private static BigDecimal number(String where, String key, Object value) {
        try {
            if (value instanceof Number n && !(value instanceof Double d && !Double.isFinite(d))) return new BigDecimal(n.toString());
            if (value instanceof String s) return new BigDecimal(s.trim());
        } catch (NumberFormatException e) {
            // falls through to the error below
        }
        throw new SpecException(where, key, "must be a number, got " + describe(value));
    }

    private static String describe(Object value) {
        return value instanceof String s ? "'" + s + "'" : String.valueOf(value);
    }
}
