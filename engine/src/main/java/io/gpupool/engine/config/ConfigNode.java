package io.gpupool.engine.config;

import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Compose;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.Node;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A value of a configuration tree and where it was read: a mapping (keys in order), a list, or a single value (text,
 * number, true/false, or null). Built from YAML text, with lines so that every error can say file:line, or from
 * plain Java values (a JSON body as Jackson reads it, a command-line flag), so that one reader serves both. The typed
 * accessors take the value's path in the tree and fail with a {@link ConfigException} naming it.
 */
public sealed interface ConfigNode permits ConfigNode.Scalar, ConfigNode.Sequence, ConfigNode.Mapping {
    /** Deeper than this is no configuration (and a YAML alias that contains itself would never end). */
    int MAX_DEPTH = 32;

    /** The file name, or what else the tree came from. */
    String source();

    /** 1-based line in the source; 0 when it has no lines. */
    int line();

    /** @param value a {@code String}, {@code Number}, {@code Boolean}, or null */
    record Scalar(Object value, String source, int line) implements ConfigNode {}

    record Sequence(List<ConfigNode> items, String source, int line) implements ConfigNode {
        public Sequence {
            items = List.copyOf(items);
        }
    }

    /** @param keyLines the line of each key (an unknown or doubled key is reported there, not at its value) */
    record Mapping(Map<String, ConfigNode> entries, Map<String, Integer> keyLines, String source, int line) implements ConfigNode {
        public Mapping {
            entries = Collections.unmodifiableMap(new LinkedHashMap<>(entries));
            keyLines = Map.copyOf(keyLines);
        }

        public static Mapping empty(String source) {
            return new Mapping(Map.of(), Map.of(), source, 0);
        }

        public boolean has(String key) { return entries.containsKey(key); }

        public ConfigNode get(String key) { return entries.get(key); }

        public Set<String> keys() { return entries.keySet(); }

        public int keyLine(String key) { return keyLines.getOrDefault(key, line); }

        /** This mapping without the given keys (a driver takes out the keys that are its own). */
        public Mapping without(Collection<String> keys) {
            Map<String, ConfigNode> e = new LinkedHashMap<>(entries);
            e.keySet().removeAll(keys);
            return new Mapping(e, keyLines, source, line);
        }

        /** This mapping with {@code key} set to {@code value} (replaced in place, or added last). */
        public Mapping with(String key, ConfigNode value) {
            Map<String, ConfigNode> e = new LinkedHashMap<>(entries);
            e.put(key, value);
            Map<String, Integer> lines = new LinkedHashMap<>(keyLines);
            if (value.line() > 0) lines.put(key, value.line());
            return new Mapping(e, lines, source, line);
        }

        /** Fails at the first key not in {@code known}, naming the known ones. */
        public Mapping allowOnly(String path, Collection<String> known) {
            for (String k : entries.keySet()) {
                if (!known.contains(k)) {
                    throw new ConfigException(source, keyLine(k), ConfigNode.child(path, k), ConfigException.Kind.SHAPE,
                            "unknown key; known keys here: " + String.join(", ", known));
                }
            }
            return this;
        }
    }

    // ---- building ---------------------------------------------------------------------------------

    /** YAML text (JSON is YAML too); an empty text is an empty mapping. Syntax errors say file:line. */
    static ConfigNode parseYaml(String text, String source) {
        Optional<Node> root;
        try {
            root = new Compose(LoadSettings.builder().setLabel(source).build()).composeString(text);
        } catch (MarkedYamlEngineException e) {
            int line = e.getProblemMark().map(m -> m.getLine() + 1).orElse(0);
            throw new ConfigException(source, line, "", ConfigException.Kind.SHAPE, "not valid YAML: " + e.getProblem());
        } catch (YamlEngineException e) {
            throw new ConfigException(source, 0, "", ConfigException.Kind.SHAPE, "not valid YAML: " + e.getMessage());
        }
        return root.isEmpty() ? Mapping.empty(source) : YamlNodes.node(root.get(), source, "", 0);
    }

    /** Plain Java values: {@code Map} (text keys), {@code List}, text, numbers, true/false, null. */
    static ConfigNode of(Object value, String source) {
        return of(value, source, "", 0);
    }

    private static ConfigNode of(Object value, String source, String path, int depth) {
        if (depth > MAX_DEPTH) throw new ConfigException(source, 0, path, ConfigException.Kind.SHAPE, "is nested too deeply");
        if (value instanceof Map<?, ?> m) {
            Map<String, ConfigNode> entries = new LinkedHashMap<>();
            for (var e : m.entrySet()) {
                String key = String.valueOf(e.getKey());
                entries.put(key, of(e.getValue(), source, child(path, key), depth + 1));
            }
            return new Mapping(entries, Map.of(), source, 0);
        }
        if (value instanceof List<?> l) {
            List<ConfigNode> items = new ArrayList<>();
            for (int i = 0; i < l.size(); i++) items.add(of(l.get(i), source, index(path, i), depth + 1));
            return new Sequence(items, source, 0);
        }
        if (value == null || value instanceof String || value instanceof Number || value instanceof Boolean) return new Scalar(value, source, 0);
        throw new ConfigException(source, 0, path, ConfigException.Kind.SHAPE, "must be text, a number, true/false, a list or a mapping");
    }

    /** {@code path.key} ({@code key} at the top). */
    static String child(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    /** {@code path[i]}. */
    static String index(String path, int i) {
        return path + "[" + i + "]";
    }

    // ---- reading ----------------------------------------------------------------------------------

    /** A value that breaks a rule of its own, reported at this node's line. */
    default ConfigException error(String path, String rule) {
        return new ConfigException(source(), line(), path, ConfigException.Kind.VALUE, rule);
    }

    /** A value of the wrong form, reported at this node's line. */
    default ConfigException shapeError(String path, String rule) {
        return new ConfigException(source(), line(), path, ConfigException.Kind.SHAPE, rule);
    }

    default boolean isNull() {
        return this instanceof Scalar s && s.value() == null;
    }

    default Mapping mapping(String path) {
        if (this instanceof Mapping m) return m;
        throw shapeError(path, "must be a mapping (key: value), got " + describe());
    }

    default List<ConfigNode> list(String path) {
        if (this instanceof Sequence s) return s.items();
        throw shapeError(path, "must be a list, got " + describe());
    }

    /** Non-empty text. */
    default String text(String path) {
        if (!(this instanceof Scalar s) || !(s.value() instanceof String v)) throw shapeError(path, "must be text, got " + describe());
        if (v.isBlank()) throw error(path, "must not be empty");
        return v.trim();
    }

    /** A finite number. */
    default double number(String path) {
        if (!(this instanceof Scalar s) || !(s.value() instanceof Number n)) throw shapeError(path, "must be a number, got " + describe());
        double d = n.doubleValue();
        if (!Double.isFinite(d)) throw error(path, "must be a finite number, got " + describe());
        return d;
    }

    /** A whole number in {@code min..max}. */
    default long whole(String path, long min, long max) {
        if (!(this instanceof Scalar s) || !(s.value() instanceof Number n)) throw shapeError(path, "must be a whole number, got " + describe());
        long v;
        try {
            v = new BigDecimal(n.toString()).longValueExact();
        } catch (ArithmeticException | NumberFormatException e) {
            throw error(path, "must be a whole number in " + min + ".." + max + ", got " + describe());
        }
        if (v < min || v > max) throw error(path, "must be in " + min + ".." + max + ", got " + v);
        return v;
    }

    /** The value as plain Java: {@code Map}, {@code List}, text, number, true/false or null. */
    default Object plain() {
        return switch (this) {
            case Scalar s -> s.value();
            case Sequence s -> s.items().stream().map(ConfigNode::plain).toList();
            case Mapping m -> {
                Map<String, Object> out = new LinkedHashMap<>();
                m.entries().forEach((k, v) -> out.put(k, v.plain()));
                yield out;
            }
        };
    }

    /**
     * The node at {@code relativePath} below this one ({@code a.b[1]}), or the deepest one on the way that exists:
     * where an error found after reading (by a policy's own checks) is reported.
     */
    default ConfigNode locate(String relativePath) {
        ConfigNode at = this;
        for (String part : relativePath.split("\\.")) {
            int bracket = part.indexOf('[');
            String key = bracket < 0 ? part : part.substring(0, bracket);
            if (!key.isEmpty()) {
                if (!(at instanceof Mapping m) || !m.has(key)) return at;
                at = m.get(key);
            }
            while (bracket >= 0) {
                int close = part.indexOf(']', bracket);
                if (close < 0) return at;
                int i;
                try {
                    i = Integer.parseInt(part.substring(bracket + 1, close));
                } catch (NumberFormatException e) {
                    return at;
                }
                if (!(at instanceof Sequence s) || i < 0 || i >= s.items().size()) return at;
                at = s.items().get(i);
                bracket = part.indexOf('[', close);
            }
        }
        return at;
    }

    /** What the value is, for an error message: the value itself, or "a list"/"a mapping". */
    default String describe() {
        return switch (this) {
            case Scalar s when s.value() == null -> "nothing";
            case Scalar s when s.value() instanceof String v -> "'" + (v.length() > 60 ? v.substring(0, 60) + "..." : v) + "'";
            case Scalar s -> String.valueOf(s.value());
            case Sequence s -> "a list";
            case Mapping m -> "a mapping";
        };
    }
}
