package io.gpupool.server.core;

import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Status;
import io.gpupool.model.GpuShare;

/**
 * The API error for a job the engine rejects at submit because it could never run on this pool: a 422 that names
 * the request field asking for more than the pool has (from the refusal's resource), or no field when the pool has
 * no nodes at all (no request could run yet).
 */
final class NeverRuns {
    private NeverRuns() {}

    static ServiceException error(Status why, JobRequest request) {
        return ServiceException.invalid(field(why, request), "the job can never run on this pool: " + why.message());
    }

    /** The field of {@link JobRequest} the refusal is about; null when no field is at fault. */
    static String field(Status why, JobRequest request) {
        return switch (why.resource()) {
            case GPU_MODEL -> "gpuTypes";
            case GPU_MEMORY -> "gpuMemMib";
            case HOST_CPU -> "cpuMilli";
            case HOST_MEMORY -> "hostMemMib";
            case NVLINK -> "requireNvlink";
            case GPUS -> request.gpusPerReplica() > 0 ? "gpusPerReplica" : "numGpus";
            case GPU_COMPUTE -> request.gpuMilli() < GpuShare.WHOLE ? "gpuMilli" : "numGpus";
            case NODES -> why.capacity() == 0 ? null : "numGpus";
            case NONE -> null;
        };
    }
}
