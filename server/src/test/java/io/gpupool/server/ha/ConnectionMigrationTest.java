package io.gpupool.server.ha;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** A standby advises turning on the kernel's connection migration only where it can be turned on and is off. */
class ConnectionMigrationTest {
    @TempDir
    Path dir;

    @Test
    void offIsAdvisedWithTheSettingAndWhereTheFixIs() throws Exception {
        Path sysctl = Files.writeString(dir.resolve("tcp_migrate_req"), "0\n");
        assertThat(ConnectionMigration.hint(sysctl)).hasValueSatisfying(line ->
                assertThat(line).contains("net.ipv4.tcp_migrate_req is 0", "set it to 1", "docs/install.md, section 11"));
    }

    @Test
    void onOrAbsentSaysNothing() throws Exception {
        assertThat(ConnectionMigration.hint(Files.writeString(dir.resolve("on"), "1\n"))).isEmpty();
        assertThat(ConnectionMigration.hint(dir.resolve("no-such-setting"))).isEmpty();
    }
}
