package io.gpupool.server.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One task of a job array: a job of its own whose id is the array's id, '_' and its index ({@code j12_3}); its
 * process gets {@code GPUPOOL_ARRAY_JOB_ID} and {@code GPUPOOL_ARRAY_TASK_ID} ({@link #launchEnv}). Its stored request
 * is the array's.
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

    /**
     * The environment a job's process gets from the server: its own, where a task's array variables are set by the
     * server (and a job of its own cannot set them: the agent passes these two names on as the server sends them).
     */
    static Map<String, String> launchEnv(ArrayTask task, Map<String, String> env) {
        Map<String, String> out = new LinkedHashMap<>(env);
        out.remove(ENV_ARRAY_JOB_ID);
        out.remove(ENV_ARRAY_TASK_ID);
        if (task != null) {
            out.put(ENV_ARRAY_JOB_ID, task.arrayId);
            out.put(ENV_ARRAY_TASK_ID, Integer.toString(task.index));
        }
        return out;
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
