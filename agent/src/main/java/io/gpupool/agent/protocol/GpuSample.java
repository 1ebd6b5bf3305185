package io.gpupool.agent.protocol;

import java.util.List;

/**
 * One telemetry reading of one GPU. A null figure means the backend could not read it (the driver said
 * "not supported", "no permission" or "N/A"); it is never replaced by a made-up zero.
 *
 * @param index              node-local GPU index
 * @param uuid               GPU UUID
 * @param utilizationPercent percent of the last sample period a kernel was running
 * @param memoryUsedMib      device memory in use (allocated and reserved by all processes and the driver)
 * @param memoryTotalMib     device memory
 * @param temperatureC       core temperature in degrees Celsius
 * @param powerWatts         board power draw in watts
 * @param processes          compute processes on this GPU
 * @param problem            null when the GPU answered; otherwise what went wrong (e.g. "GPU is lost"), so
 *                           the server can mark the GPU unhealthy
 */
public record GpuSample(int index, String uuid, Integer utilizationPercent, Long memoryUsedMib, Long memoryTotalMib,
                        Integer temperatureC, Double powerWatts, List<GpuProcess> processes, String problem) {
    public GpuSample {
        processes = List.copyOf(processes);
    }
}
