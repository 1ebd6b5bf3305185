package io.gpupool.agent.gpu;

/** An NVML call returned an error code; the message carries NVML's own text and, for common codes, a hint. */
public final class NvmlException extends GpuBackendException {
    private final String function;
    private final int code;

    NvmlException(String function, int code, String nvmlText) {
        super(function + " failed: " + nvmlText + " (NVML error " + code + ")" + hint(code));
        this.function = function;
        this.code = code;
    }

    /** The NVML function that failed. */
    public String function() {
        return function;
    }

    /** NVML's return code (nvmlReturn_t). */
    public int code() {
        return code;
    }

    private static String hint(int code) {
        return switch (code) {
            case Nvml.ERROR_NO_PERMISSION -> "; the agent's user cannot open /dev/nvidia*";
            case Nvml.ERROR_DRIVER_NOT_LOADED -> "; is the nvidia kernel module loaded (lsmod | grep nvidia)?";
            case Nvml.ERROR_LIB_RM_VERSION_MISMATCH ->
                    "; libnvidia-ml and the kernel driver are of different versions (reload the driver or reboot)";
            case Nvml.ERROR_GPU_IS_LOST -> "; the GPU has fallen off the bus";
            default -> "";
        };
    }
}
