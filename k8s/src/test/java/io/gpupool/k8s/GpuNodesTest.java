package io.gpupool.k8s;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static io.gpupool.k8s.KubeFixtures.gfdNode;
import static io.gpupool.k8s.KubeFixtures.hamiNode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class GpuNodesTest {
    private final GpuNodes nodes = new GpuNodes(GpuCatalog.standard(), 10, 1.0);

    @Test
    void featureDiscoveryLabelsGiveCountModelAndNvlink() {
        NodeSpec s = nodes.toSpec(gfdNode("a", "NVIDIA-A100-SXM4-80GB", 8, 81920));
        assertThat(s.gpus()).hasSize(8);
        assertThat(s.gpus().getFirst().model().id()).isEqualTo("A100-80GB");
        assertThat(s.nvlinkDomains()).hasSize(1);
        assertThat(s.splitCount()).isEqualTo(10);
        // an unknown product with its memory label is a model of its own
        assertThat(nodes.toSpec(gfdNode("b", "NVIDIA-Quantum-X1", 2, 49152)).gpus().getFirst().model().memoryMib()).isEqualTo(49152);
        assertThat(nodes.toSpec(new NodeBuilder().withNewMetadata().withName("cpu").endMetadata().build())).isNull();
    }

    @Test
    void hamiRegistrationGivesUuidsSplitCountHealthAndTheMemoryTheCardHas() {
        Node n = hamiNode("h", "NVIDIA-Tesla T4", 2, 15360);
        n.getMetadata().getAnnotations().put(KubeNames.NODE_NVIDIA_REGISTER,
                "GPU-1,5,15360,100,NVIDIA-Tesla T4,0,true,1,hami-core:GPU-0,5,15360,100,NVIDIA-Tesla T4,0,false,0,hami-core:");
        NodeSpec s = nodes.toSpec(n);
        assertThat(s.gpus()).extracting(g -> g.uuid()).containsExactly("GPU-0", "GPU-1");
        assertThat(s.gpus().getFirst().healthy()).isFalse();
        assertThat(s.splitCount()).isEqualTo(5);
        assertThat(s.gpus().getFirst().model().id()).isEqualTo("T4");
        assertThat(s.gpus().getFirst().model().memoryMib()).as("less than the data sheet's 16 GB").isEqualTo(15360);
        // registered memory above the card's is HAMi's deviceMemoryScaling
        n.getMetadata().getAnnotations().put(KubeNames.NODE_NVIDIA_REGISTER, "GPU-0,10,32768,100,NVIDIA-Tesla T4,0,true:");
        assertThat(nodes.toSpec(n).memoryOversubscription()).isEqualTo(2.0);
        n.getMetadata().getAnnotations().put(KubeNames.NODE_NVIDIA_REGISTER, "GPU-0,10,abc,100,T4,0,true:");
        assertThatThrownBy(() -> nodes.toSpec(n)).isInstanceOf(SpecException.class).hasMessageContaining("node h").hasMessageContaining("device memory");
    }

    @Test
    void theShippedConfigMapAndExamplesAreValid() throws Exception {
        Path root = Path.of(System.getProperty("gpupool.repo.root", ".."));
        var yaml = tools.jackson.dataformat.yaml.YAMLMapper.builder().build();
        var cm = yaml.readTree(root.resolve("deploy/configmap.yaml").toFile());
        Path cfg = java.nio.file.Files.createTempFile("gpupool", ".yaml");
        java.nio.file.Files.writeString(cfg, cm.get("data").get("gpupool.yaml").asString());
        K8sConfig c = K8sConfig.load(cfg);
        assertThat(c.tenantOf("vision-dev")).isEqualTo("vision");
        assertThat(c.tenants().get("vision").guaranteedGpus()).isEqualTo(8);
        var ser = new io.fabric8.kubernetes.client.utils.KubernetesSerialization();
        io.fabric8.kubernetes.api.model.Pod p = ser.unmarshal(java.nio.file.Files.readString(root.resolve("deploy/examples/shared-inference.yaml")), io.fabric8.kubernetes.api.model.Pod.class);
        assertThat(PodRequest.of(p, GpuCatalog.standard()).share().milli()).isEqualTo(250);
        io.fabric8.kubernetes.api.model.batch.v1.Job job = ser.unmarshal(java.nio.file.Files.readString(root.resolve("deploy/examples/gang.yaml")), io.fabric8.kubernetes.api.model.batch.v1.Job.class);
        io.fabric8.kubernetes.api.model.Pod member = new io.fabric8.kubernetes.api.model.PodBuilder().withMetadata(job.getSpec().getTemplate().getMetadata())
                .editMetadata().withName("m").withNamespace("nlp").endMetadata().withSpec(job.getSpec().getTemplate().getSpec()).build();
        assertThat(PodRequest.of(member, GpuCatalog.standard()).gangMinMembers()).isEqualTo(4);
        assertThat(List.of(c.schedulerName())).containsExactly("gpupool");
    }
}
