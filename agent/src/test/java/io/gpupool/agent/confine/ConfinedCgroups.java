package io.gpupool.agent.confine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Real cgroups for tests: the machine's layout, a node name of the test's own, and the clean-up of every group made
 * under it (processes left in them are killed first), also when the test failed.
 */
public final class ConfinedCgroups implements AutoCloseable {

    public final CgroupLayout layout = CgroupLayout.detect();
    public final String node = "test-" + ProcessHandle.current().pid() + "-" + System.nanoTime();

    public static boolean isRoot() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) return line.substring(4).trim().split("\\s+")[1].equals("0");
            }
        } catch (IOException e) {
            // not Linux
        }
        return false;
    }

    /** The node directories this test's confinement may have made, in every hierarchy. */
    private List<Path> nodeDirs() {
        List<Path> out = new ArrayList<>();
        if (layout.v2Base() != null) out.add(layout.v2Base().resolve("gpupool").resolve(node));
        for (Path m : layout.v1Mounts().values()) {
            Path p = m.resolve("gpupool").resolve(node);
            if (!out.contains(p)) out.add(p);
        }
        return out;
    }

    /** Attempt groups still present under this test's node (none once the runner cleaned up). */
    public List<Path> leftoverGroups() throws IOException {
        List<Path> out = new ArrayList<>();
        for (Path n : nodeDirs()) {
            if (!Files.isDirectory(n)) continue;
            try (Stream<Path> s = Files.list(n)) {
                s.filter(Files::isDirectory).forEach(out::add);
            }
        }
        return out;
    }

    @Override
    public void close() throws IOException {
        for (Path group : leftoverGroups()) {
            if (Files.exists(group.resolve("freezer.state"))) Files.writeString(group.resolve("freezer.state"), "THAWED");
            for (long pid : AttemptCgroup.pids(group)) ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (!AttemptCgroup.pids(group).isEmpty() && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            Files.deleteIfExists(group);
        }
        for (Path n : nodeDirs()) {
            Files.deleteIfExists(n);
            try {
                Files.deleteIfExists(n.getParent()); // "gpupool", if no other node uses it
            } catch (IOException e) {
                // another node's groups are there
            }
        }
    }
}
