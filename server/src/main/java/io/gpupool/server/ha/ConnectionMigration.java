package io.gpupool.server.ha;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Whether the kernel hands a closing listener's queued connections to another listener of the same port
 * ({@code net.ipv4.tcp_migrate_req}, Linux 5.14+). At a takeover the standby's listener closes beside the new active's
 * one: what it already took in is answered, but connections the kernel had queued for it and nobody accepted yet are
 * reset unless the kernel moves them. A standby says so once when it starts, with the fix (docs/install.md, section 11).
 */
public final class ConnectionMigration {
    /** Where Linux shows the setting. */
    public static final Path SYSCTL = Path.of("/proc/sys/net/ipv4/tcp_migrate_req");

    private ConnectionMigration() {}

    /**
     * The line a standby prints when the setting at {@code sysctl} is off; empty when it is on, or where there is no such
     * setting to read (another system, an older kernel: nothing to advise).
     */
    public static Optional<String> hint(Path sysctl) {
        String value;
        try {
            value = Files.readString(sysctl).trim();
        } catch (IOException e) {
            return Optional.empty();
        }
        if (!value.equals("0")) return Optional.empty();
        return Optional.of("note: net.ipv4.tcp_migrate_req is 0: at a takeover, connections the kernel queued for this standby's "
                + "listener and nobody accepted yet are reset (clients retry them); set it to 1 to have them handed to the new "
                + "active's listener (docs/install.md, section 11)");
    }
}
