package io.gpupool.agent.gpu;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * A shell script that answers like nvidia-smi from the fixture files {@code smi/NAME-*}. It checks the
 * exact arguments of each query, so a changed query string fails the test instead of passing unnoticed.
 */
public final class FakeNvidiaSmi {

    private FakeNvidiaSmi() {
    }

    /** A script in {@code dir} that prints the fixtures of {@code fixture} (e.g. "hgx-a100"). */
    public static Path write(Path dir, String fixture) throws IOException, URISyntaxException {
        Path fixtures = Path.of(FakeNvidiaSmi.class.getResource("smi").toURI());
        String gpuQuery = "--query-gpu=index,uuid,name,memory.total,memory.used,memory.free,utilization.gpu,"
                + "temperature.gpu,power.draw,driver_version";
        String script = """
                #!/bin/sh
                d='%s'; f='%s'
                case "$*" in
                  '%s --format=csv,noheader,nounits') cat "$d/$f-gpus.csv" ;;
                  '--query-compute-apps=gpu_uuid,pid,used_memory --format=csv,noheader,nounits') cat "$d/$f-apps.csv" ;;
                  'topo -m') cat "$d/$f-topo.txt" ;;
                  '-q -d COMPUTE') cat "$d/$f-q.txt" ;;
                  *) echo "fake nvidia-smi: unexpected arguments: $*" >&2; exit 2 ;;
                esac
                """.formatted(fixtures, fixture, gpuQuery);
        Path p = dir.resolve("nvidia-smi");
        Files.writeString(p, script);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return p;
    }

    /** A script that fails the way nvidia-smi does on a machine whose driver is not loaded. */
    public static Path writeBroken(Path dir) throws IOException {
        Path p = dir.resolve("nvidia-smi");
        Files.writeString(p, "#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                + "Make sure that the latest NVIDIA driver is installed and running.\"\nexit 9\n");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return p;
    }
}
