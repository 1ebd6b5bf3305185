package io.gpupool.server.core;

/** What the engine loop reports for metrics. Called on the loop thread: keep it cheap. */
public interface LoopListener {
    void round(long nanos, int started, int preempted);

    void submitted(String tenant);

    void rejected(String tenant);

    void finished(String tenant, String state);

    /** Usage charged to the tenant since the last call (GPU-seconds allocated and used, joules); see UsageMeter. */
    default void usage(String tenant, double allocatedGpuSeconds, double usedGpuSeconds, double joules) {}

    LoopListener NONE = new LoopListener() {
        @Override public void round(long nanos, int started, int preempted) {}
        @Override public void submitted(String tenant) {}
        @Override public void rejected(String tenant) {}
        @Override public void finished(String tenant, String state) {}
    };
}
