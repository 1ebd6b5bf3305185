package io.gpupool.server.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Mutations of a JSON value that still serialize as JSON: wrong types, nulls, extremes, deep nesting, odd text. */
public final class JsonMutator {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private JsonMutator() {}

    /** The value with one mutation at a random place in it (the root itself is sometimes replaced). */
    public static JsonNode mutate(JsonNode root, Random rnd) {
        List<JsonNode> containers = new ArrayList<>();
        collect(root, containers);
        if (containers.isEmpty() || rnd.nextInt(15) == 0) return strange(rnd);
        JsonNode c = containers.get(rnd.nextInt(containers.size()));
        if (c instanceof ObjectNode o) {
            List<String> names = new ArrayList<>();
            o.fieldNames().forEachRemaining(names::add);
            if (names.isEmpty() || rnd.nextInt(6) == 0) {
                o.set(pick(rnd, "unknown", "", "__proto__", "constructor", "numGpus", "tenant", "node_id", "\u0000", "\ud83d\ude00"), strange(rnd));
            } else if (rnd.nextInt(5) == 0) {
                o.remove(names.get(rnd.nextInt(names.size())));
            } else {
                o.set(names.get(rnd.nextInt(names.size())), strange(rnd));
            }
        } else if (c instanceof ArrayNode a) {
            if (a.isEmpty() || rnd.nextInt(4) == 0) a.add(strange(rnd));
            else a.set(rnd.nextInt(a.size()), strange(rnd));
        }
        return root;
    }

    private static void collect(JsonNode n, List<JsonNode> out) {
        if (!n.isContainerNode()) return;
        out.add(n);
        n.elements().forEachRemaining(child -> collect(child, out));
    }

    /** A value of a kind the schema rarely wants. */
    static JsonNode strange(Random rnd) {
        return switch (rnd.nextInt(22)) {
            case 0 -> F.nullNode();
            case 1 -> F.numberNode(rnd.nextLong());
            case 2 -> F.numberNode(pick(rnd, -1L, 0L, Long.MAX_VALUE, Long.MIN_VALUE, (long) Integer.MAX_VALUE + 1, (long) Integer.MIN_VALUE - 1));
            case 3 -> F.numberNode(new BigInteger("9".repeat(1 + rnd.nextInt(400))));
            case 4 -> F.numberNode(pick(rnd, 1e308, -1e308, Double.MIN_VALUE, -0.0, 0.5, 1.5, 1e-300));
            case 5 -> F.numberNode(new BigDecimal("1e" + pick(rnd, "999", "-999", "99999", "400")));
            case 6 -> F.booleanNode(rnd.nextBoolean());
            case 7 -> F.textNode("");
            case 8 -> F.textNode(Texts.unicode(rnd, rnd.nextInt(60)));
            case 9 -> F.textNode("x".repeat(pick(rnd, 201, 4097, 65_000, 70_000)));
            case 10 -> F.textNode(pick(rnd, "NaN", "Infinity", "-1", "1e999", "00012", "0x10", "true", "null", "[]", "A100-80GB", "fair-share"));
            case 11 -> F.textNode(pick(rnd, "\u0000", "\ud800", "\udfff", "\u202e", "\ufeff", "\r\n", "../../etc/passwd", "'; drop table jobs; --", "%zz", "${jndi:ldap://x}"));
            case 12 -> F.objectNode();
            case 13 -> F.arrayNode();
            case 14 -> F.objectNode().put("nested", 1).set("deeper", F.arrayNode().add(F.objectNode()));
            case 15 -> nested(rnd.nextInt(60));
            case 16 -> F.arrayNode().add(1).add("two").addNull().add(true);
            case 17 -> {
                ArrayNode a = F.arrayNode();
                for (int i = 0, n = pick(rnd, 100, 10_001, 20_000); i < n; i++) a.add(i);
                yield a;
            }
            case 18 -> F.textNode(Texts.unicode(rnd, 3).repeat(1 + rnd.nextInt(20)));
            case 19 -> F.numberNode(rnd.nextInt(2000) - 1000);
            case 20 -> F.binaryNode(new byte[]{1, 2, 3});
            default -> F.textNode(pick(rnd, "0", "1", "-1", "PENDING", "RUNNING", "STDOUT", "stdout", "admin", "fuzz", "GPU-0"));
        };
    }

    private static JsonNode nested(int depth) {
        JsonNode n = F.numberNode(1);
        for (int i = 0; i < depth; i++) n = (i % 2 == 0) ? F.arrayNode().add(n) : F.objectNode().set("n", n);
        return n;
    }

    @SafeVarargs
    static <T> T pick(Random rnd, T... options) {
        return options[rnd.nextInt(options.length)];
    }
}
