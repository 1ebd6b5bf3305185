package io.gpupool.engine;

/** Lifecycle of a job in the engine. REJECTED jobs never enter the queue. */
public enum JobStatus {
    PENDING, RUNNING, COMPLETED, CANCELLED, REJECTED;

    public boolean terminal() {
        return this == COMPLETED || this == CANCELLED || this == REJECTED;
    }
}
