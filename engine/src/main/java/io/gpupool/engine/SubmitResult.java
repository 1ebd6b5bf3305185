package io.gpupool.engine;

import io.gpupool.engine.status.Status;

/** A submission is either queued or rejected with the reason (never left pending when it can never run). */
public record SubmitResult(String jobId, boolean accepted, Status status) {
    public static SubmitResult accepted(String id) { return new SubmitResult(id, true, null); }

    public static SubmitResult rejected(String id, Status why) { return new SubmitResult(id, false, java.util.Objects.requireNonNull(why)); }

    /** Why it was rejected, in English ({@link Status#message()}); null when accepted. */
    public String reason() { return status == null ? null : status.message(); }
}
