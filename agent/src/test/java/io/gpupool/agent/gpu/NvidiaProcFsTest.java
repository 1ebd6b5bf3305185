package io.gpupool.agent.gpu;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** Device minors from the driver's /proc/driver/nvidia/gpus/<bus id>/information, as the driver writes it. */
class NvidiaProcFsTest {

    @Test
    void readsEachGpusMinorByUuid(@TempDir Path gpus) throws Exception {
        write(gpus.resolve("0000:07:00.0"), "GPU-aaaa", 1);
        write(gpus.resolve("0000:0f:00.0"), "GPU-bbbb", 0);
        Files.createDirectories(gpus.resolve("0000:10:00.0")); // being probed: no information yet
        assertThat(NvidiaProcFs.minorsByUuid(gpus)).containsExactlyInAnyOrderEntriesOf(java.util.Map.of("GPU-aaaa", 1, "GPU-bbbb", 0));
        assertThat(NvidiaProcFs.minorsByUuid(gpus.resolve("absent"))).as("no driver").isEmpty();
    }

    private static void write(Path dir, String uuid, int minor) throws Exception {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("information"), "Model: \t\t NVIDIA A100-SXM4-80GB\nIRQ:   \t\t 189\nGPU UUID: \t " + uuid
                + "\nVideo BIOS: \t 92.00.36.00.10\nBus Type: \t PCIe\nDMA Size: \t 47 bits\nDMA Mask: \t 0x7fffffffffff\n"
                + "Bus Location: \t " + dir.getFileName() + "\nDevice Minor: \t " + minor + "\nGPU Excluded:\t No\n");
    }
}
