package io.gpupool.server.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpupool.store.JobRow;

import java.util.Map;

/**
 * A job array as the API shows it: the request its tasks share (from its first task), how many tasks it has and how
 * many are in each state, and one state for the whole: RUNNING while any task runs, else PENDING while any waits,
 * else SUCCEEDED when all succeeded, else FAILED when any failed, else CANCELLED.
 */
final class ArrayJson {
    private ArrayJson() {}

    static ObjectNode of(String arrayId, JobRow firstTask, Map<String, Long> states) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("id", arrayId);
        o.put("tenant", firstTask.tenant());
        o.put("state", state(states));
        JsonNode spec;
        try {
            spec = Json.MAPPER.readTree(firstTask.spec());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored spec of " + firstTask.id() + " is not JSON", e);
        }
        o.put("name", spec.path("name").asText());
        o.put("numGpus", spec.path("numGpus").asInt());
        o.put("gpuMilli", spec.path("gpuMilli").asInt());
        o.put("gpuMemMib", spec.path("gpuMemMib").asLong());
        o.put("cap", spec.path("array").path("cap").asInt(0));
        o.put("submittedMs", firstTask.submittedMs());
        o.put("firstTask", firstTask.id());
        long total = states.values().stream().mapToLong(Long::longValue).sum();
        o.put("tasks", total);
        ObjectNode counts = o.putObject("counts");
        for (String s : JobRoutes.STATES.stream().sorted().toList()) counts.put(s, states.getOrDefault(s, 0L));
        return o;
    }

    static String state(Map<String, Long> states) {
        for (String s : new String[] {"RUNNING", "PENDING"}) if (states.getOrDefault(s, 0L) > 0) return s;
        long all = states.values().stream().mapToLong(Long::longValue).sum();
        if (states.getOrDefault("SUCCEEDED", 0L) == all) return "SUCCEEDED";
        return states.getOrDefault("FAILED", 0L) > 0 ? "FAILED" : "CANCELLED";
    }
}
