package io.gpupool.server;

import io.gpupool.store.TestDatabases;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

class PostgresRestartTest extends RestartContractTest {
    @TempDir Path dir;
    private String url;

    @BeforeEach
    void database() {
        url = TestDatabases.freshPostgresUrl();
    }

    @Override
    protected ServerOptions options() {
        return TestServer.options(dir).withDb(url);
    }
}
