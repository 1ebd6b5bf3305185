package io.gpupool.store;

import org.junit.jupiter.api.BeforeEach;

class PostgresStoreTest extends StoreContractTest {
    private String url;

    @BeforeEach
    @Override
    void open() {
        url = TestDatabases.freshPostgresUrl();
        super.open();
    }

    @Override
    protected String jdbcUrl() {
        return url;
    }
}
