package io.gpupool.server;

import java.io.IOException;
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

    static NetworkPartition create() throws IOException, InterruptedException {
        long pid = ProcessHandle.current().pid();
        String ns = "gpupool-pt-" + pid;
        String host = "gpt" + pid % 100_000 + "h";
        String inside = "gpt" + pid % 100_000 + "n";
        String subnet = "10.213." + pid % 250 + ".";
        run(false, "netns", "del", ns); // left by a run that was killed
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

    private static String ip() {
        for (String d : List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin")) {
            if (Files.isExecutable(Path.of(d, "ip"))) return d + "/ip";
        }
        return null;
    }
}
