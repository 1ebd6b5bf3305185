package io.gpupool.k8s;

import io.gpupool.model.SpecException;

import java.util.ArrayList;
import java.util.List;

/**
 * HAMi's encoding of a scheduling decision: per container, the devices it gets, each
 * {@code UUID,TYPE,MEMORY_MIB,CORES:}, and a {@code ;} after every container
 * ({@code GPU-a,NVIDIA,3000,30:;} is one container with a 3000 MiB, 30% share of GPU-a;
 * {@code ;GPU-a,NVIDIA,81920,100:GPU-b,NVIDIA,81920,100:;} is a first container without GPUs and a
 * second one with two whole GPUs).
 */
public final class DeviceAnnotations {
    private DeviceAnnotations() {}

    /** One device handed to a container. */
    public record Device(String uuid, String type, long memoryMib, int cores) {}

    public static String encode(List<List<Device>> containers) {
        StringBuilder sb = new StringBuilder();
        for (List<Device> c : containers) {
            for (Device d : c) {
                sb.append(d.uuid()).append(',').append(d.type()).append(',').append(d.memoryMib()).append(',').append(d.cores()).append(':');
            }
            sb.append(';');
        }
        return sb.toString();
    }

    /** Decodes an annotation value; {@code where} names the pod and annotation in the error. */
    public static List<List<Device>> decode(String value, String where) {
        List<List<Device>> containers = new ArrayList<>();
        if (value == null || value.isEmpty()) return containers;
        String[] parts = value.split(";", -1);
        // the value ends with ';', so the last part is empty
        for (int c = 0; c < parts.length - (value.endsWith(";") ? 1 : 0); c++) {
            List<Device> devices = new ArrayList<>();
            for (String dev : parts[c].split(":")) {
                if (dev.isEmpty()) continue;
                String[] f = dev.split(",", -1);
                if (f.length != 4) {
                    throw new SpecException(where, "container " + c, "device '" + dev + "' must be UUID,TYPE,MEMORY,CORES");
                }
                try {
                    devices.add(new Device(f[0], f[1], Long.parseLong(f[2].trim()), Integer.parseInt(f[3].trim())));
                } catch (NumberFormatException e) {
                    throw new SpecException(where, "container " + c, "device '" + dev + "': memory and cores must be integers");
                }
            }
            containers.add(devices);
        }
        return containers;
    }
}
