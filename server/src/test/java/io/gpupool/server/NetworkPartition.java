package io.gpupool.server;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.StandardOpenOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A network namespace joined to this host by a veth pair, for a real network partition: processes started under
 * {@link #exec()} reach the host only through the pair; {@link #cut()} takes the host's end down, so every packet
 * between them is dropped silently (connections stay open, new ones time out) until {@link #restore()}. Needs root
 * and iproute2's {@code ip}; one namespace and one pair per instance, both gone at {@link #close()}.
 */
final class NetworkPartition implements AutoCloseable {
    private final String ns;
    private final String hostEnd;
    private final String hostIp;

    private NetworkPartition(String ns, String hostEnd, String hostIp) {
        this.ns = ns;
        this.hostEnd = hostEnd;
        this.hostIp = hostIp;
    }

    /** Root, and an {@code ip} that can make namespaces. */
    static String unavailableBecause() {
        if (!"root".equals(System.getProperty("user.name"))) return "network namespaces need root";
        if (ip() == null) return "iproute2's ip is not installed";
        return null;
    }

    /**
     * Tests in other JVMs on the same machine (a CI run beside a soak) make pairs too, and a JVM killed with SIGKILL
     * leaves its pair behind: the namespaces of dead JVMs are removed, and the subnet is one no other pair holds,
     * chosen under a lock all JVMs share (two pairs on one /30 would route each other's packets astray).
     */
    static NetworkPartition create() throws IOException, InterruptedException {
        try (FileChannel lock = FileChannel.open(Path.of("/tmp/gpupool-network-partition.lock"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE); FileLock held = lock.lock()) {
            removeLeftovers();
            return createUnlocked();
        }
    }

    private static NetworkPartition createUnlocked() throws IOException, InterruptedException {
        long pid = ProcessHandle.current().pid();
        String ns = NS_PREFIX + pid;
        String host = hostEnd(pid);
        String inside = "gpt" + pid % 100_000 + "n";
        String subnet = "10.213." + freeSubnet((int) (pid % 250)) + ".";
        run(false, "netns", "del", ns); // left by a run of this very pid
        run(false, "link", "del", host);
        NetworkPartition p = new NetworkPartition(ns, host, subnet + "1");
        try {
            run(true, "netns", "add", ns);
            run(true, "link", "add", host, "type", "veth", "peer", "name", inside);
            run(true, "link", "set", inside, "netns", ns);
            run(true, "addr", "add", subnet + "1/30", "dev", host);
            run(true, "link", "set", host, "up");
            run(true, "netns", "exec", ns, ip(), "addr", "add", subnet + "2/30", "dev", inside);
            run(true, "netns", "exec", ns, ip(), "link", "set", inside, "up");
            run(true, "netns", "exec", ns, ip(), "link", "set", "lo", "up");
            return p;
        } catch (IOException | RuntimeException e) {
            p.close();
            throw e;
        }
    }

    private static final String NS_PREFIX = "gpupool-pt-";

    private static String hostEnd(long pid) {
        return "gpt" + pid % 100_000 + "h";
    }

    /** Namespaces (and their host ends) of JVMs that are gone. */
    private static void removeLeftovers() throws IOException, InterruptedException {
        for (String line : output("netns", "list").lines().toList()) {
            String name = line.split(" ")[0];
            if (!name.startsWith(NS_PREFIX)) continue;
            long pid;
            try {
                pid = Long.parseLong(name.substring(NS_PREFIX.length()));
            } catch (NumberFormatException e) {
                continue;
            }
            if (ProcessHandle.of(pid).isPresent()) continue;
            run(false, "netns", "del", name);
            run(false, "link", "del", hostEnd(pid));
        }
    }

    /** The first of 10.213.X.0/30 (X from {@code first}, 0-249) that no address of this host is in. */
    private static int freeSubnet(int first) throws IOException, InterruptedException {
        String addresses = output("-o", "-4", "addr", "show");
        for (int i = 0; i < 250; i++) {
            int x = (first + i) % 250;
            if (!addresses.contains(" 10.213." + x + ".")) return x;
        }
        throw new IOException("no free 10.213.X.0/30 subnet for a test partition: " + addresses);
    }

    /** This host's address on the pair: what processes in the namespace connect to. */
    String hostIp() {
        return hostIp;
    }

    /** The command prefix that runs a process inside the namespace. */
    List<String> exec() {
        return List.of(ip(), "netns", "exec", ns);
    }

    void cut() throws IOException, InterruptedException {
        run(true, "link", "set", hostEnd, "down");
    }

    void restore() throws IOException, InterruptedException {
        run(true, "link", "set", hostEnd, "up");
    }

    @Override
    public void close() throws IOException, InterruptedException {
        run(false, "netns", "del", ns); // takes the pair with it
        run(false, "link", "del", hostEnd);
    }

    private static void run(boolean mustWork, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(ip()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + ": no answer in 30 s");
        }
        if (mustWork && p.exitValue() != 0) throw new IOException(String.join(" ", cmd) + " failed: " + out.trim());
    }

    private static String output(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(ip()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) throw new IOException(String.join(" ", cmd) + " failed: " + out.trim());
        return out;
    }

    private static String ip() {
        for (String d : List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin")) {
            if (Files.isExecutable(Path.of(d, "ip"))) return d + "/ip";
        }
        return null;
    }
}
