package io.gpupool.server;

import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

class SqliteRestartTest extends RestartContractTest {
    @TempDir Path dir;

    @Override
    protected ServerOptions options() {
        return TestServer.options(dir);
    }
}
