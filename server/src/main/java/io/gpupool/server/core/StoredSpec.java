package io.gpupool.server.core;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpupool.model.GpuCatalog;

/**
 * What the store keeps of a job as its spec: the request's canonical JSON ({@link JobRequest#toNode()}) and, where
 * the job has them, its workflow fields (its array task). A job without them is stored exactly as before.
 */
public record StoredSpec(JobRequest request, ArrayTask array) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public String toJson() {
        ObjectNode o = request.toNode();
        if (array != null) array.write(o);
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
        return new StoredSpec(JobRequest.parse(o, catalog), array);
    }
}
