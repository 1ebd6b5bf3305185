package io.gpupool.k8s;

import io.gpupool.engine.TenantConfig;
import io.gpupool.engine.config.ConfigException;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.policy.FairSharePolicy;
import io.gpupool.engine.policy.LasPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The drivers' file: the configuration tree with the Kubernetes-only keys beside it; the older file still reads. */
class K8sConfigTest {
    @TempDir Path dir;

    private K8sConfig load(String yaml) throws Exception {
        Path f = dir.resolve("gpupool.yaml");
        Files.writeString(f, yaml);
        return K8sConfig.load(f);
    }

    private ConfigException error(String yaml) {
        try {
            load(yaml);
        } catch (ConfigException e) {
            return e;
        } catch (Exception e) {
            throw new AssertionError("not a ConfigException: " + e, e);
        }
        throw new AssertionError("no error for:\n" + yaml);
    }

    @Test
    void anOldStyleFileAndANewStyleFileReadToTheSameConfig() throws Exception {
        K8sConfig old = load("""
                schedulerName: gpu-sched
                policy: fair-share
                placement: spread:2,topology;limit=8
                defaultSplitCount: 4
                defaultMemoryScaling: 1.5
                tenants:
                  - name: vision
                    namespaces: [vision, vision-dev]
                    weight: 2
                    guaranteedGpus: 8
                    limitGpus: 32
                  - name: nlp
                    limitGpus: 16
                """);
        K8sConfig tree = load("""
                schedulerName: gpu-sched
                defaultSplitCount: 4
                defaultMemoryScaling: 1.5
                policy:
                  name: fair-share
                placement:
                  scorers: {spread: 2, topology: 1}
                  candidateLimit: 8
                tenants:
                  vision: {weight: 2, guaranteedGpus: 8, limitGpus: 32, namespaces: [vision, vision-dev]}
                  nlp: {limitGpus: 16}
                """);
        assertThat(tree).isEqualTo(old);
        assertThat(tree.tenantOf("vision-dev")).isEqualTo("vision");
        assertThat(tree.tenantOf("nlp")).isEqualTo("nlp");
        assertThat(tree.tenantOf("other")).isEqualTo("other");
        assertThat(tree.tenants()).containsEntry("nlp", new TenantConfig("nlp", 1, 0, 16));
        assertThat(tree.placement()).isEqualTo(PlacementConfig.parse("spread:2,topology;limit=8"));
        assertThat(tree.schedulerConfig().policyArgs()).isEqualTo(FairSharePolicy.Args.DEFAULTS);
    }

    @Test
    void theTreeGivesThePoliciesSettingsAndFlagsKeepThemForTheSamePolicy() throws Exception {
        K8sConfig c = load("policy:\n  name: las\n  args:\n    thresholdsGpuSec: [60, 600]\ndefaultRuntime: 10m\n");
        assertThat(c.schedulerConfig().policyArgs()).isEqualTo(new LasPolicy.Args(List.of(60.0, 600.0)));
        assertThat(c.schedulerConfig().defaultRuntimeMs()).isEqualTo(600_000);
        assertThat(c.withPolicy("las").schedulerConfig().policyArgs()).isEqualTo(new LasPolicy.Args(List.of(60.0, 600.0)));
        assertThat(c.withPolicy("fcfs").policy()).isEqualTo("fcfs");
        assertThatThrownBy(() -> c.withPolicy("srtf-oracle")).hasMessageContaining("--policy");
        assertThat(K8sConfig.defaults().schedulerName()).isEqualTo("gpupool");
        assertThat(K8sConfig.defaults().tenants()).isEqualTo(Map.of());
    }

    @Test
    void errorsNameTheFileLineAndPath() {
        ConfigException args = error("policy:\n  name: las\n  args:\n    thresholdsGpuSec: [3600, 100]\n");
        assertThat(args.where()).endsWith("gpupool.yaml:4");
        assertThat(args.path()).isEqualTo("policy.args.thresholdsGpuSec[1]");
        ConfigException unknown = error("schedulerName: x\nplacment: spread\n");
        assertThat(unknown.line()).isEqualTo(2);
        assertThat(unknown.path()).isEqualTo("placment");
        assertThat(unknown.rule()).contains("schedulerName", "placement");
        ConfigException listed = error("tenants:\n  - name: vision\n    weight: 0\n");
        assertThat(listed.line()).isEqualTo(3);
        assertThat(listed.path()).isEqualTo("tenants.vision.weight");
        ConfigException twice = error("tenants:\n  a: {namespaces: [shared]}\n  b: {namespaces: [shared]}\n");
        assertThat(twice.line()).isEqualTo(3);
        assertThat(twice.path()).isEqualTo("tenants.b.namespaces");
        assertThat(error("tenants:\n  - weight: 2\n").path()).isEqualTo("tenants[0].name");
        assertThat(error("defaultSplitCount: 0\n").path()).isEqualTo("defaultSplitCount");
        assertThat(error("defaultMemoryScaling: 20\n").path()).isEqualTo("defaultMemoryScaling");
        assertThat(error("\n\npredictor: history\n").line()).isEqualTo(3);
        assertThat(error("policy: srtf-oracle\n").rule()).contains("not available here");
    }
}
