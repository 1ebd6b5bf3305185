package io.gpupool.server.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a job waits for before it may start, in Slurm's {@code --dependency} syntax: comma-separated
 * {@code TYPE:ID[:ID...]} and {@code singleton}. An ID is a job ({@code j7}), an array task ({@code j12_3}) or a whole
 * array ({@code j12}: all its tasks).
 * <ul>
 *   <li>{@code after}: the job has started (or ended); an array: every task has;</li>
 *   <li>{@code afterany}: the job has ended, in any state; an array: every task has;</li>
 *   <li>{@code afterok}: the job succeeded; an array: every task did. Any other end can never meet it;</li>
 *   <li>{@code afternotok}: the job ended other than succeeded; an array: every task ended and one did not
 *       succeed. A success (every task's, for an array) can never meet it;</li>
 *   <li>{@code singleton}: no job submitted before it with the same tenant, user and name is still active.</li>
 * </ul>
 * The conditions kept are those not met yet; {@code killOnInvalid} says whether a job whose condition can never be met
 * fails (Slurm's {@code --kill-on-invalid-dep=yes}, the default here) or stays queued, held.
 *
 * @param conditions what is still waited for, in the order given
 */
public record Dependency(List<Condition> conditions, boolean singleton, boolean killOnInvalid) {
    public static final String FIELD = "dependency";
    private static final Pattern JOB_ID = Pattern.compile("j[0-9]{1,18}(_[0-9]{1,7})?");
    /** At most this many conditions per job. */
    public static final int MAX_CONDITIONS = 64;

    public enum Type {
        AFTER, AFTERANY, AFTEROK, AFTERNOTOK;

        String wire() { return name().toLowerCase(Locale.ROOT); }
    }

    /**
     * One job or array waited for.
     *
     * @param notOkSeen an array waited for with afternotok: one of its tasks has already ended other than succeeded
     */
    public record Condition(Type type, String target, boolean notOkSeen) {
        @Override
        public String toString() { return type.wire() + ":" + target; }
    }

    /**
     * A job or array named at submission as the store has it, read before the submission reached the engine loop.
     *
     * @param finalState its end (an array's: SUCCEEDED when every task succeeded, else FAILED); null while active
     * @param notOk      an array: one of its tasks ended other than succeeded
     */
    public record Target(String finalState, boolean notOk) {}

    public Dependency {
        conditions = List.copyOf(conditions);
    }

    public static Dependency parse(String text, boolean killOnInvalid) {
        if (text == null || text.isBlank()) throw ServiceException.invalid(FIELD, "must not be empty (e.g. afterok:j7)");
        if (text.length() > 4096) throw ServiceException.invalid(FIELD, "must be at most 4096 characters");
        Set<Condition> conditions = new LinkedHashSet<>();
        boolean singleton = false;
        for (String item : text.trim().split(",", -1)) {
            String t = item.trim();
            if (t.equals("singleton")) {
                singleton = true;
                continue;
            }
            String[] parts = t.split(":", -1);
            Type type;
            try {
                type = Type.valueOf(parts[0].toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw ServiceException.invalid(FIELD, "unknown type '" + clip(parts[0]) + "'; one of after, afterany, afterok, afternotok, singleton");
            }
            if (parts.length < 2) throw ServiceException.invalid(FIELD, "'" + clip(t) + "' names no job (e.g. " + type.wire() + ":j7)");
            for (int i = 1; i < parts.length; i++) {
                if (!JOB_ID.matcher(parts[i]).matches()) {
                    throw ServiceException.invalid(FIELD, "'" + clip(parts[i]) + "' is not a job id (j7, an array j12 or one of its tasks j12_3)");
                }
                conditions.add(new Condition(type, parts[i], false));
            }
        }
        if (conditions.size() > MAX_CONDITIONS) throw ServiceException.invalid(FIELD, "at most " + MAX_CONDITIONS + " jobs");
        return new Dependency(new ArrayList<>(conditions), singleton, killOnInvalid);
    }

    /** The jobs and arrays named. */
    public Set<String> targets() {
        Set<String> s = new LinkedHashSet<>();
        for (Condition c : conditions) s.add(c.target());
        return s;
    }

    public boolean waits() { return singleton || !conditions.isEmpty(); }

    public Dependency with(List<Condition> remaining) {
        return new Dependency(remaining, singleton, killOnInvalid);
    }

    /** The conditions still waited for, in the syntax they were given in. */
    @Override
    public String toString() {
        List<String> items = new ArrayList<>();
        for (Condition c : conditions) items.add(c.toString());
        if (singleton) items.add("singleton");
        return String.join(",", items);
    }

    void write(ObjectNode spec) {
        ObjectNode o = spec.putObject(FIELD);
        ArrayNode waits = o.putArray("waitsFor");
        for (Condition c : conditions) {
            ObjectNode w = waits.addObject().put("type", c.type().wire()).put("job", c.target());
            if (c.notOkSeen()) w.put("notOkSeen", true);
        }
        o.put("singleton", singleton);
        o.put("killOnInvalid", killOnInvalid);
    }

    static Dependency read(JsonNode o) {
        List<Condition> cs = new ArrayList<>();
        for (JsonNode w : o.path("waitsFor")) {
            cs.add(new Condition(Type.valueOf(w.path("type").asText().toUpperCase(Locale.ROOT)), w.path("job").asText(), w.path("notOkSeen").asBoolean()));
        }
        return new Dependency(cs, o.path("singleton").asBoolean(), o.path("killOnInvalid").asBoolean(true));
    }

    private static String clip(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }
}
