package io.gpupool.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class K8sCommandTest {

    @Test
    void helpListsBothModes() {
        Cli.Result r = Cli.run("k8s", "--help");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out()).contains("extender").contains("scheduler");
        assertThat(Cli.run("k8s", "extender", "--help").out()).contains("--port").contains("--node-cache-capable");
        assertThat(Cli.run("k8s", "scheduler", "--help").out()).contains("--leader-elect").contains("--scheduler-name");
    }

    @Test
    void aBadConfigFileIsRefusedWithItsLineAndField(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("gpupool.yaml");
        Files.writeString(cfg, "policy: fair-share\ntenants:\n  - name: vision\n    weight: -2\n");
        Cli.Result r = Cli.run("k8s", "scheduler", "--config", cfg.toString(), "--leader-elect", "false");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains(cfg + ":4").contains("tenants.vision.weight").contains("must be > 0");

        Files.writeString(cfg, "policy: fair-share\nplacment: binpack\n");
        Cli.Result typo = Cli.run("k8s", "extender", "--config", cfg.toString());
        assertThat(typo.exitCode()).isEqualTo(2);
        assertThat(typo.err()).contains(cfg + ":2").contains("placment");

        Files.writeString(cfg, "policy: fastest\n");
        assertThat(Cli.run("k8s", "scheduler", "--config", cfg.toString()).err()).contains("fastest");
        Cli.Result missing = Cli.run("k8s", "scheduler", "--config", dir.resolve("missing.yaml").toString());
        assertThat(missing.exitCode()).isEqualTo(2);
        assertThat(missing.err()).contains("missing.yaml");
    }
}
