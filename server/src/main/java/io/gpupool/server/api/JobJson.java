package io.gpupool.server.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpupool.server.core.JobRequest;
import io.gpupool.server.core.Views;
import io.gpupool.store.JobRow;

/** A job as the API shows it: the request's fields, its state and times, and (when active) what the engine knows. */
final class JobJson {
    private JobJson() {}

    static ObjectNode of(JobRow row, Views.Live live) {
        try {
            return of(row, Json.MAPPER.readTree(row.spec()), live);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored spec of " + row.id() + " is not JSON", e);
        }
    }

    /** The same, from the request as accepted (no need to parse the stored spec again). */
    static ObjectNode ofAccepted(JobRow row, JobRequest request) {
        return of(row, request.toNode(), null);
    }

    private static ObjectNode of(JobRow row, JsonNode spec, Views.Live live) {
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("id", row.id());
        o.put("tenant", row.tenant());
        o.put("state", live != null ? live.state() : row.state());
        spec.fieldNames().forEachRemaining(f -> {
            if (!f.equals("tenant")) o.set(f, spec.get(f));
        });
        o.put("submittedMs", row.submittedMs());
        o.set("startedMs", row.startedMs() == null ? null : o.numberNode(row.startedMs()));
        o.set("endedMs", row.endedMs() == null ? null : o.numberNode(row.endedMs()));
        o.put("preemptions", row.preemptions());
        o.set("exitCode", row.exitCode() == null ? null : o.numberNode(row.exitCode()));
        o.put("message", row.message());
        o.put("idempotencyKey", row.idemKey());
        if (live != null) {
            o.put("waitReason", live.waitReason());
            o.set("allocation", Json.MAPPER.valueToTree(live.allocation()));
        } else {
            o.putNull("waitReason");
            o.putArray("allocation");
        }
        return o;
    }
}
