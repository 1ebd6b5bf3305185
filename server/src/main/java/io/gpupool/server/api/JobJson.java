package io.gpupool.server.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpupool.engine.status.Status;
import io.gpupool.server.core.JobRequest;
import io.gpupool.server.core.Views;
import io.gpupool.store.AttemptRow;
import io.gpupool.store.JobRow;

import java.util.List;

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

    /** Where each attempt ran, with its grants there and what its agent reported. */
    static ArrayNode attempts(List<AttemptRow> rows) {
        ArrayNode out = Json.MAPPER.createArrayNode();
        for (AttemptRow a : rows) {
            ObjectNode o = out.addObject();
            o.put("attempt", a.attempt());
            o.put("node", a.node());
            o.put("state", a.state());
            try {
                o.set("grants", Json.MAPPER.readTree(a.grants()));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("stored grants of " + a.jobId() + " are not JSON", e);
            }
            o.put("assignedMs", a.assignedMs());
            o.set("pid", a.pid() == null ? null : o.numberNode(a.pid()));
            o.set("startedMs", a.startedMs() == null ? null : o.numberNode(a.startedMs()));
            o.set("endedMs", a.endedMs() == null ? null : o.numberNode(a.endedMs()));
            o.set("exitCode", a.exitCode() == null ? null : o.numberNode(a.exitCode()));
            o.put("message", a.message());
        }
        return out;
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
        o.put("attempt", row.attempt());
        if (!o.has("restartPolicy")) o.put("restartPolicy", JobRequest.REQUEUE);
        if (!o.has("cpuMilli")) o.put("cpuMilli", 0);      // the stored form leaves out requests not made
        if (!o.has("hostMemMib")) o.put("hostMemMib", 0);
        if (!o.has("runAs")) o.putNull("runAs");
        o.set("exitCode", row.exitCode() == null ? null : o.numberNode(row.exitCode()));
        o.put("message", row.message());
        o.put("idempotencyKey", row.idemKey());
        if (live != null) {
            o.put("waitReason", live.waitReason());
            o.set("waitStatus", waitStatus(o, live.waitStatus()));
            o.set("allocation", Json.MAPPER.valueToTree(live.allocation()));
        } else {
            o.putNull("waitReason");
            o.putNull("waitStatus");
            o.putArray("allocation");
        }
        return o;
    }

    /**
     * The refusal a waiting job's reason renders, as data (null for a note such as "preempted for j7"): code
     * (UNSCHEDULABLE: not now; UNRESOLVABLE: never here; ERROR), the plugin that refused, the resource, and the
     * amounts where they apply (null where they do not).
     */
    private static JsonNode waitStatus(ObjectNode parent, Status s) {
        if (s == null) return parent.nullNode();
        ObjectNode o = parent.objectNode();
        o.put("code", s.code().name());
        o.put("plugin", s.plugin());
        o.put("resource", s.resource().name());
        o.set("requested", amount(o, s.requested()));
        o.set("free", amount(o, s.free()));
        o.set("capacity", amount(o, s.capacity()));
        return o;
    }

    private static JsonNode amount(ObjectNode o, long v) {
        return v == Status.UNKNOWN ? o.nullNode() : o.numberNode(v);
    }
}
