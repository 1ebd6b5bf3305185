package io.gpupool.server.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;

/**
 * A plausible instance of a JSON schema: required properties always, optional ones half the time, enums,
 * bounds and lengths kept. A value the schema cannot tell (a job id that exists, a GPU model the catalog
 * knows) comes from a hint by property name, so that many samples get past validation into the handler.
 */
public final class SchemaSampler {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private final OpenApi api;
    private final Map<String, Function<Random, JsonNode>> hints;

    public SchemaSampler(OpenApi api, Map<String, Function<Random, JsonNode>> hints) {
        this.api = api;
        this.hints = hints;
    }

    public JsonNode sample(JsonNode schema, Random rnd) {
        return sample(null, schema, rnd, 0);
    }

    private JsonNode sample(String property, JsonNode schema, Random rnd, int depth) {
        schema = api.resolve(schema);
        if (property != null && hints.containsKey(property) && rnd.nextInt(10) > 0) return hints.get(property).apply(rnd);
        if (schema.has("example") && rnd.nextBoolean()) return schema.get("example").deepCopy();
        if (schema.has("enum")) return schema.get("enum").get(rnd.nextInt(schema.get("enum").size())).deepCopy();
        String type = type(schema, rnd);
        return switch (type) {
            case "null" -> F.nullNode();
            case "object" -> object(schema, rnd, depth);
            case "array" -> array(property, schema, rnd, depth);
            case "integer" -> F.numberNode(integer(schema, rnd));
            case "number" -> F.numberNode(number(schema, rnd));
            case "boolean" -> F.booleanNode(rnd.nextBoolean());
            default -> F.textNode(string(schema, rnd));
        };
    }

    /** The schema's type; of a union such as ["integer", "null"], mostly the non-null one. */
    private static String type(JsonNode schema, Random rnd) {
        JsonNode t = schema.path("type");
        if (t.isArray()) {
            List<String> types = new ArrayList<>();
            t.forEach(x -> types.add(x.asText()));
            if (types.contains("null") && types.size() > 1 && rnd.nextInt(5) > 0) types.remove("null");
            return types.get(rnd.nextInt(types.size()));
        }
        if (t.isTextual()) return t.asText();
        return schema.has("properties") ? "object" : "string";
    }

    private ObjectNode object(JsonNode schema, Random rnd, int depth) {
        ObjectNode o = F.objectNode();
        List<String> required = new ArrayList<>();
        schema.path("required").forEach(r -> required.add(r.asText()));
        schema.path("properties").properties().forEach(p -> {
            if (required.contains(p.getKey()) || (depth < 6 && rnd.nextBoolean())) o.set(p.getKey(), sample(p.getKey(), p.getValue(), rnd, depth + 1));
        });
        JsonNode extra = schema.path("additionalProperties");
        if (extra.isObject()) {
            for (int i = 0, n = rnd.nextInt(3); i < n; i++) o.set("K" + rnd.nextInt(100), sample(null, extra, rnd, depth + 1));
        }
        return o;
    }

    private ArrayNode array(String property, JsonNode schema, Random rnd, int depth) {
        ArrayNode a = F.arrayNode();
        int min = schema.path("minItems").asInt(0);
        int max = Math.min(schema.path("maxItems").asInt(Integer.MAX_VALUE), min + 2);
        for (int i = 0, n = min + rnd.nextInt(max - min + 1); i < n && depth < 8; i++) {
            a.add(sample(property == null ? null : property + "[]", schema.path("items"), rnd, depth + 1));
        }
        return a;
    }

    private static long integer(JsonNode schema, Random rnd) {
        long min = schema.path("minimum").asLong(0);
        long max = schema.path("maximum").asLong(Math.max(min, 0) + 1000);
        return min + (long) (rnd.nextDouble() * (max - min + 1));
    }

    private static double number(JsonNode schema, Random rnd) {
        double min = schema.path("minimum").asDouble(0);
        double max = schema.path("maximum").asDouble(min + 100);
        return min + rnd.nextDouble() * (max - min);
    }

    private static String string(JsonNode schema, Random rnd) {
        if (schema.path("format").asText().equals("byte")) {
            byte[] b = new byte[rnd.nextInt(64)];
            rnd.nextBytes(b);
            return Base64.getEncoder().encodeToString(b);
        }
        // lower-case letters and digits fit every pattern in the document (tenant and node names)
        String s = "fz" + Integer.toString(rnd.nextInt(1 << 20), 36);
        int max = schema.path("maxLength").asInt(Integer.MAX_VALUE);
        return s.length() > max ? s.substring(0, max) : s;
    }
}
