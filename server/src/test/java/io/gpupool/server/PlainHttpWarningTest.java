package io.gpupool.server;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Which listen addresses make the server warn that it serves plain HTTP beyond this machine. */
class PlainHttpWarningTest {
    @Test
    void only_loopback_addresses_count_as_this_machine_only() {
        assertThat(GpupoolServer.loopbackOnly("127.0.0.1")).isTrue();
        assertThat(GpupoolServer.loopbackOnly("::1")).isTrue();
        assertThat(GpupoolServer.loopbackOnly("localhost")).isTrue();
        assertThat(GpupoolServer.loopbackOnly("0.0.0.0")).isFalse(); // every interface: the default
        assertThat(GpupoolServer.loopbackOnly("::")).isFalse();
    }
}
