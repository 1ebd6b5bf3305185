package io.gpupool.server.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One task of a job array: a job of its own whose id is the array's id, '_' and its index ({@code j12_3}), with
 * {@code GPUPOOL_ARRAY_JOB_ID} and {@code GPUPOOL_ARRAY_TASK_ID} in its environment.
 *
 * @param arrayId the array's id ({@code j12}: "j" and the sequence number of its first task)
 * @param index   this task's index
 * @param cap     the most tasks of the array running at once; 0 = no cap
 */
public record ArrayTask(String arrayId, int index, int cap) {
    public static final String ENV_ARRAY_JOB_ID = "GPUPOOL_ARRAY_JOB_ID";
    public static final String ENV_ARRAY_TASK_ID = "GPUPOOL_ARRAY_TASK_ID";
    /** A task's id: the array's id, '_', the index. */
    private static final Pattern TASK_ID = Pattern.compile("(j[0-9]+)_([0-9]+)");

    public String jobId() { return arrayId + "_" + index; }

    /** The array id of a task id, or null when {@code jobId} names no task. */
    public static String arrayOf(String jobId) {
        Matcher m = TASK_ID.matcher(jobId);
        return m.matches() ? m.group(1) : null;
    }

    /** The task's request: the array's, with the task's variables in its environment. */
    public JobRequest request(JobRequest arrayRequest) {
        Map<String, String> env = new LinkedHashMap<>(arrayRequest.env());
        env.put(ENV_ARRAY_JOB_ID, arrayId);
        env.put(ENV_ARRAY_TASK_ID, Integer.toString(index));
        return arrayRequest.withEnv(env);
    }

    void write(ObjectNode spec) {
        ObjectNode o = spec.putObject("array");
        o.put("id", arrayId);
        o.put("index", index);
        if (cap > 0) o.put("cap", cap);
    }

    static ArrayTask read(JsonNode array) {
        return new ArrayTask(array.path("id").asText(), array.path("index").asInt(), array.path("cap").asInt(0));
    }
}
