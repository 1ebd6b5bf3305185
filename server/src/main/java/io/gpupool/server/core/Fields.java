package io.gpupool.server.core;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpupool.model.SpecException;
import io.gpupool.model.TimeLimit;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.Iterator;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads typed fields from a JSON object and says exactly which field breaks which rule. Shared by every
 * request body of the API, so all of them reject bad input the same way (400 for a wrong JSON type, 422
 * for a value out of range).
 */
public final class Fields {
    public static final Pattern NAME = Pattern.compile("[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?");
    private final ObjectNode node;
    private final String prefix;

    private Fields(ObjectNode node, String prefix) {
        this.node = node;
        this.prefix = prefix;
    }

    /** The body must be a JSON object with no fields but {@code known}. */
    public static Fields of(JsonNode body, String prefix, Set<String> known) {
        if (body == null || !body.isObject()) {
            throw ServiceException.malformed(prefix.isEmpty() ? "body" : prefix, "must be a JSON object");
        }
        for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!known.contains(f)) {
                throw ServiceException.malformed(path(prefix, f), "unknown field; known fields: " + String.join(", ", known.stream().sorted().toList()));
            }
        }
        return new Fields((ObjectNode) body, prefix);
    }

    public String path(String field) { return path(prefix, field); }

    private static String path(String prefix, String field) {
        return prefix.isEmpty() ? field : prefix + "." + field;
    }

    public boolean has(String f) {
        JsonNode v = node.get(f);
        return v != null && !v.isNull();
    }

    public JsonNode raw(String f) { return node.get(f); }

    public String string(String f, String dflt, int maxLen) {
        if (!has(f)) return dflt;
        JsonNode v = node.get(f);
        if (!v.isTextual()) throw ServiceException.malformed(path(f), "must be a string");
        String s = v.textValue();
        if (s.length() > maxLen) throw ServiceException.invalid(path(f), "must be at most " + maxLen + " characters");
        if (s.chars().anyMatch(c -> c < 0x20 && c != '\t')) throw ServiceException.invalid(path(f), "must not contain control characters");
        return s;
    }

    public String name(String f, String dflt) {
        String s = string(f, dflt, 64);
        if (s != null && !NAME.matcher(s).matches()) {
            throw ServiceException.invalid(path(f), "must be 1-64 lowercase letters, digits or '-', starting and ending with a letter or digit");
        }
        return s;
    }

    public long integer(String f, long dflt, long min, long max) {
        if (!has(f)) return dflt;
        JsonNode v = node.get(f);
        if (!v.isIntegralNumber() && !(v.isNumber() && v.asDouble() == Math.rint(v.asDouble()) && Math.abs(v.asDouble()) < 1e15)) {
            throw ServiceException.malformed(path(f), "must be an integer");
        }
        if (!v.canConvertToLong()) throw ServiceException.invalid(path(f), "must be in " + min + ".." + max);
        long x = v.asLong();
        if (x < min || x > max) throw ServiceException.invalid(path(f), "must be in " + min + ".." + max + ", got " + x);
        return x;
    }

    public double number(String f, double dflt, double min, double max) {
        if (!has(f)) return dflt;
        JsonNode v = node.get(f);
        if (!v.isNumber()) throw ServiceException.malformed(path(f), "must be a number");
        double x = v.asDouble();
        if (!(x >= min && x <= max)) throw ServiceException.invalid(path(f), "must be in " + min + ".." + max + ", got " + x);
        return x;
    }

    /**
     * A time limit in seconds: a string in Slurm's {@code --time} formats ({@link TimeLimit}) or an integer number of
     * minutes (Slurm's bare number).
     */
    public long timeLimitSec(String f, long dflt) {
        if (!has(f)) return dflt;
        JsonNode v = node.get(f);
        if (v.isIntegralNumber()) {
            long minutes = integer(f, 0, 1, TimeLimit.MAX_SECONDS / 60);
            return minutes * 60;
        }
        if (!v.isTextual()) throw ServiceException.malformed(path(f), "must be a string (e.g. \"1-12:00:00\") or a number of minutes");
        try {
            return TimeLimit.parseSeconds(null, null, string(f, null, 40));
        } catch (SpecException e) {
            throw ServiceException.invalid(path(f), e.rule());
        }
    }

    public boolean bool(String f, boolean dflt) {
        if (!has(f)) return dflt;
        JsonNode v = node.get(f);
        if (!v.isBoolean()) throw ServiceException.malformed(path(f), "must be true or false");
        return v.booleanValue();
    }

    public JsonNode array(String f, int maxItems) {
        JsonNode v = node.get(f);
        if (!v.isArray()) throw ServiceException.malformed(path(f), "must be an array");
        if (v.size() > maxItems) throw ServiceException.invalid(path(f), "must have at most " + maxItems + " items");
        return v;
    }

    public ObjectNode object(String f, int maxFields) {
        JsonNode v = node.get(f);
        if (!v.isObject()) throw ServiceException.malformed(path(f), "must be a JSON object");
        if (v.size() > maxFields) throw ServiceException.invalid(path(f), "must have at most " + maxFields + " entries");
        return (ObjectNode) v;
    }
}
