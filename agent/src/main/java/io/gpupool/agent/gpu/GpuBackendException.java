package io.gpupool.agent.gpu;

/** A backend cannot discover or read the GPUs; the message says why in words an operator can act on. */
public class GpuBackendException extends Exception {
    public GpuBackendException(String message) {
        super(message);
    }

    public GpuBackendException(String message, Throwable cause) {
        super(message, cause);
    }
}
