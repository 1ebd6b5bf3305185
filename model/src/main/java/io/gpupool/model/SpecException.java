package io.gpupool.model;

/**
 * A spec (job, node, cluster, trace row, config) breaks a rule. The message always names the place
 * (file:line or object id), the field and the rule, so a user can fix the input without reading code.
 */
public class SpecException extends IllegalArgumentException {
    private final String where;
    private final String field;
    private final String rule;

    public SpecException(String where, String field, String rule) {
        super(format(where, field, rule));
        this.where = where;
        this.field = field;
        this.rule = rule;
    }

    private static String format(String where, String field, String rule) {
        StringBuilder sb = new StringBuilder();
        if (where != null && !where.isEmpty()) sb.append(where).append(": ");
        if (field != null && !field.isEmpty()) sb.append("field '").append(field).append("': ");
        return sb.append(rule).toString();
    }

    public String where() { return where; }

    public String field() { return field; }

    /** The rule broken, without place and field (to restate it at another place). */
    public String rule() { return rule; }
}
