package io.gpupool.store;

import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

class SqliteStoreTest extends StoreContractTest {
    @TempDir Path dir;

    @Override
    protected String jdbcUrl() {
        return TestDatabases.sqliteUrl(dir);
    }
}
