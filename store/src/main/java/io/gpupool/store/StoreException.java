package io.gpupool.store;

/** The database failed (unreachable, full, corrupt): the service answers 503, never a wrong result. */
public final class StoreException extends RuntimeException {
    public StoreException(String message, Throwable cause) {
        super(message + ": " + cause.getMessage(), cause);
    }
}
