package io.gpupool.server.core;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpupool.model.GpuCatalog;

/**
 * What the store keeps of a job as its spec: the request's canonical JSON ({@link JobRequest#toNode()}) and, where
 * the job has them, its workflow fields: its array task ({@code array}), what it still waits for ({@code dependency})
 * and who holds it ({@code heldBy}). A job without them is stored exactly as before.
 *
 * @param dependency null when the job waits for nothing (any more)
 * @param heldBy     who put the job on hold ({@code hold}), null when it is not held
 */
public record StoredSpec(JobRequest request, ArrayTask array, Dependency dependency, String heldBy) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public StoredSpec(JobRequest request, ArrayTask array) {
        this(request, array, null, null);
    }

    public String toJson() {
        ObjectNode o = request.toNode();
        if (array != null) array.write(o);
        if (dependency != null && dependency.waits()) dependency.write(o);
        if (heldBy != null) o.put("heldBy", heldBy);
        return o.toString();
    }

    public static StoredSpec read(String json, GpuCatalog catalog) {
        ObjectNode o;
        try {
            o = (ObjectNode) JSON.readTree(json);
        } catch (JsonProcessingException | ClassCastException e) {
            throw new IllegalStateException("stored job spec is not a JSON object: " + e.getMessage());
        }
        ArrayTask array = o.has("array") ? ArrayTask.read(o.remove("array")) : null;
        Dependency dependency = o.has(Dependency.FIELD) ? Dependency.read(o.remove(Dependency.FIELD)) : null;
        String heldBy = o.has("heldBy") ? o.remove("heldBy").asText() : null;
        return new StoredSpec(JobRequest.parse(o, catalog), array, dependency, heldBy);
    }
}
