package io.gpupool.server.fuzz;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The operations an OpenAPI document declares: method, path template, parameters, body schema and roles. */
public final class OpenApi {
    /** Every role a token can have; a description's "Roles: any" means all of them. */
    public static final Set<String> ROLES = Set.of("admin", "member", "agent", "node");
    private static final Pattern ROLES_LINE = Pattern.compile("Roles: ([^.]*)");

    /** A parameter: {@code in} is path, query or header. */
    public record Param(String name, String in, JsonNode schema) {}

    /**
     * One method on one path. {@code roles}: who may call it, from the description's "Roles: ..." line (empty
     * for a public operation, one with {@code security: []}).
     */
    public record Operation(String method, String path, List<Param> params, JsonNode body, boolean isPublic, Set<String> roles) {
        public String key() {
            return method + " " + path;
        }

        public List<Param> params(String in) {
            return params.stream().filter(p -> p.in().equals(in)).toList();
        }

        public boolean isApi() {
            return path.startsWith("/api/");
        }
    }

    private final JsonNode doc;
    private final List<Operation> operations = new ArrayList<>();

    public OpenApi(JsonNode doc) {
        this.doc = doc;
        doc.path("paths").properties().forEach(p -> p.getValue().properties().forEach(m -> {
            if (m.getKey().equals("parameters")) return; // path-level parameters: this document puts them on operations
            JsonNode op = m.getValue();
            List<Param> params = new ArrayList<>();
            for (JsonNode param : op.path("parameters")) {
                JsonNode q = resolve(param);
                params.add(new Param(q.path("name").asText(), q.path("in").asText(), resolve(q.path("schema"))));
            }
            JsonNode body = op.path("requestBody").path("content").path("application/json").path("schema");
            boolean isPublic = op.has("security") && op.path("security").isEmpty();
            operations.add(new Operation(m.getKey(), p.getKey(), List.copyOf(params), body.isMissingNode() ? null : resolve(body),
                    isPublic, isPublic ? Set.of() : roles(op.path("description").asText())));
        }));
    }

    public List<Operation> operations() {
        return List.copyOf(operations);
    }

    /** The schema itself, or the one its {@code $ref} names (local references only, as this document has). */
    public JsonNode resolve(JsonNode schema) {
        while (schema.has("$ref")) {
            String ref = schema.get("$ref").asText();
            if (!ref.startsWith("#/")) throw new IllegalArgumentException("not a local reference: " + ref);
            schema = doc.at(ref.substring(1));
            if (schema.isMissingNode()) throw new IllegalArgumentException("dangling reference: " + ref);
        }
        return schema;
    }

    /** "Roles: admin (tenant required), member (its own tenant)." names admin and member. */
    private static Set<String> roles(String description) {
        Matcher m = ROLES_LINE.matcher(description.replaceAll("\\([^)]*\\)", ""));
        if (!m.find()) return ROLES;
        Set<String> out = new LinkedHashSet<>();
        for (String part : m.group(1).split(",")) {
            String role = part.trim().split("\\s+")[0].toLowerCase(Locale.ROOT);
            if (role.equals("any")) return ROLES;
            if (ROLES.contains(role)) out.add(role);
        }
        return out.isEmpty() ? ROLES : Set.copyOf(out);
    }
}
