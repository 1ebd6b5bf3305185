package io.gpupool.server;

import io.gpupool.model.SpecException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** SQLite serves one server: a second one on the same database file is refused at start, and the first is unharmed. */
class SqliteSingleServerTest {
    @TempDir Path dir;

    @Test
    void a_second_server_on_the_same_sqlite_file_is_refused_with_one_line() throws Exception {
        try (TestServer first = TestServer.start(TestServer.options(dir))) {
            long sizeBefore = Files.size(dir.resolve("gpupool.db"));
            PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
            assertThatThrownBy(() -> GpupoolServer.start(TestServer.options(dir).withPort(0), out)).isInstanceOf(SpecException.class)
                    .hasMessageContaining("another gpupool server already uses the SQLite database")
                    .hasMessageContaining("PostgreSQL")
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
            assertThat(Files.size(dir.resolve("gpupool.db"))).isEqualTo(sizeBefore);
            assertThat(first.get("/healthz", null).status()).isEqualTo(200);
        }
        // once the first has stopped, a server starts on the file again
        try (TestServer again = TestServer.start(TestServer.options(dir))) {
            assertThat(again.get("/healthz", null).text("role")).isEqualTo("active");
        }
    }
}
