package io.gpupool.engine;

/** A submission is either queued or rejected with the reason (never left pending when it can never run). */
public record SubmitResult(String jobId, boolean accepted, String reason) {
    public static SubmitResult accepted(String id) { return new SubmitResult(id, true, null); }

    public static SubmitResult rejected(String id, String reason) { return new SubmitResult(id, false, reason); }
}
