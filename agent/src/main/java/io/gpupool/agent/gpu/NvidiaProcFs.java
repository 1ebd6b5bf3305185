package io.gpupool.agent.gpu;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The NVIDIA driver's own description of its GPUs: {@code /proc/driver/nvidia/gpus/<pci bus id>/information}, with
 * lines such as {@code GPU UUID: GPU-...} and {@code Device Minor: 3}. It gives the device node minor number where
 * nvidia-smi's queries do not.
 */
final class NvidiaProcFs {

    static final Path GPUS_DIR = Path.of("/proc/driver/nvidia/gpus");

    private NvidiaProcFs() {
    }

    /** UUID → device minor of every GPU the driver lists under {@code gpusDir}; empty without the driver. */
    static Map<String, Integer> minorsByUuid(Path gpusDir) {
        Map<String, Integer> out = new HashMap<>();
        try (Stream<Path> dirs = Files.list(gpusDir)) {
            for (Path d : dirs.toList()) {
                String uuid = null;
                Integer minor = null;
                try {
                    for (String line : Files.readAllLines(d.resolve("information"))) {
                        int colon = line.indexOf(':');
                        if (colon < 0) continue;
                        String key = line.substring(0, colon).trim();
                        String value = line.substring(colon + 1).trim();
                        if (key.equals("GPU UUID")) uuid = value;
                        else if (key.equals("Device Minor")) minor = Integer.valueOf(value);
                    }
                } catch (IOException | NumberFormatException e) {
                    continue;
                }
                if (uuid != null && minor != null) out.put(uuid, minor);
            }
        } catch (IOException e) {
            // no driver (or not Linux): minors unknown
        }
        return out;
    }
}
