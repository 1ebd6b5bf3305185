package io.gpupool.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ClusterSpecsTest {
    private static final Pattern NVIDIA_UUID =
            Pattern.compile("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
    private final GpuCatalog catalog = GpuCatalog.standard();

    @TempDir
    Path dir;

    private ClusterSpec parse(String spec) {
        return ClusterSpecs.parse(spec, catalog);
    }

    private Path write(String name, String yaml) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, yaml);
        return p;
    }

    private static NodeSpec node(ClusterSpec c, String name) {
        return c.nodes().stream().filter(n -> n.name().equals(name)).findFirst().orElseThrow();
    }

    // ------------------------------------------------------------------ SPEC strings

    @Test
    void specBuildsEveryGroupWithDefaults() {
        ClusterSpec c = parse("64x8:V100-32GB,16x8:A100-80GB");
        assertThat(c.nodes()).hasSize(80);
        assertThat(c.totalGpus()).isEqualTo(640);
        assertThat(c.nodes().getFirst().name()).isEqualTo("v100-32gb-0000");
        assertThat(c.nodes().get(63).name()).isEqualTo("v100-32gb-0063");
        assertThat(c.nodes().get(64).name()).isEqualTo("a100-80gb-0000");
        assertThat(c.nodes().getLast().name()).isEqualTo("a100-80gb-0015");

        NodeSpec v100 = c.nodes().getFirst();
        assertThat(v100.gpus()).hasSize(8).allSatisfy(g -> {
            assertThat(g.model().id()).isEqualTo("V100-32GB");
            assertThat(g.healthy()).isTrue();
        });
        assertThat(v100.gpus()).extracting(GpuDevice::index).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
        assertThat(v100.cpuMilli()).isEqualTo(96_000);
        assertThat(v100.memoryMib()).isEqualTo(1024 * 1024);
        assertThat(v100.memoryOversubscription()).isEqualTo(1.0);
        assertThat(v100.splitCount()).isEqualTo(NodeSpec.DEFAULT_SPLIT_COUNT);
        assertThat(v100.labels()).isEmpty();
        assertThat(v100.nvlinkDomains()).containsExactly(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7));
        assertThat(c.nodes().get(64).nvlinkDomains()).containsExactly(List.of(0, 1, 2, 3, 4, 5, 6, 7));
    }

    @Test
    void cpuAndMemoryScaleWithGpuCount() {
        NodeSpec n = parse("1x4:T4").nodes().getFirst();
        assertThat(n.cpuMilli()).isEqualTo(48_000);
        assertThat(n.memoryMib()).isEqualTo(512 * 1024);
        assertThat(n.nvlinkDomains()).isEmpty();
    }

    @Test
    void numberingIsPerModelAndContinuesAcrossGroups() {
        ClusterSpec c = parse("1x8:T4,1x8:A10,2x8:T4");
        assertThat(c.nodes()).extracting(NodeSpec::name).containsExactly("t4-0000", "a10-0000", "t4-0001", "t4-0002");
    }

    @Test
    void specModelsResolveThroughAliasesAndProductStrings() {
        ClusterSpec c = parse(" 2 x 8 : V100M32 , 1X4:NVIDIA-A100-SXM4-80GB,1x2:NVIDIA GeForce RTX 3090 ");
        assertThat(c.nodes()).extracting(n -> n.gpus().getFirst().model().id())
                .containsExactly("V100-32GB", "V100-32GB", "A100-80GB", "RTX-3090");
        assertThat(c.nodes()).extracting(NodeSpec::name)
                .containsExactly("v100-32gb-0000", "v100-32gb-0001", "a100-80gb-0000", "rtx-3090-0000");
        assertThat(node(c, "rtx-3090-0000").nvlinkDomains()).containsExactly(List.of(0, 1));
    }

    @Test
    void gpuUuidsHaveNvidiasFormatAreUniqueAndDeterministic() {
        ClusterSpec a = parse("3x8:H100-80GB,2x4:L4");
        ClusterSpec b = parse("3x8:H100-80GB,2x4:L4");
        Set<String> uuids = new HashSet<>();
        for (NodeSpec n : a.nodes()) {
            for (GpuDevice g : n.gpus()) {
                assertThat(g.uuid()).matches(NVIDIA_UUID);
                assertThat(g.uuid()).isEqualTo(ClusterSpecs.gpuUuid(n.name(), g.index()));
                uuids.add(g.uuid());
            }
        }
        assertThat(uuids).hasSize(a.totalGpus());
        assertThat(b.nodes()).flatExtracting(NodeSpec::gpus).extracting(GpuDevice::uuid)
                .containsExactlyElementsOf(a.nodes().stream().flatMap(n -> n.gpus().stream()).map(GpuDevice::uuid).toList());
        assertThat(ClusterSpecs.gpuUuid("n1", 0)).isNotEqualTo(ClusterSpecs.gpuUuid("n1", 1)).isNotEqualTo(ClusterSpecs.gpuUuid("n2", 0));
    }

    @Test
    void specOptionsSetOversubscriptionAndSplitCount() {
        ClusterSpec c = parse("2x8:A100-80GB:oversub=1.5:split=4,1x1:T4");
        assertThat(c.nodes().getFirst().memoryOversubscription()).isEqualTo(1.5);
        assertThat(c.nodes().getFirst().splitCount()).isEqualTo(4);
        assertThat(c.nodes().getLast().memoryOversubscription()).isEqualTo(1.0);
        assertThat(c.nodes().getLast().splitCount()).isEqualTo(NodeSpec.DEFAULT_SPLIT_COUNT);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
            "64y8:V100      | cluster spec '64y8:V100' group 1: expected NODESxGPUS:MODEL",
            "abc            | cluster spec 'abc' group 1: expected NODESxGPUS:MODEL",
            "2x8            | cluster spec '2x8' group 1: expected NODESxGPUS:MODEL",
            "0x8:T4         | cluster spec '0x8:T4' group 1: field 'node count': must be in 1..100000, got 0",
            "2x8:T4,-1x8:T4 | cluster spec '2x8:T4,-1x8:T4' group 2: field 'node count': must be a positive integer, got '-1'",
            "2x0:T4         | group 1: field 'GPUs per node': must be in 1..64, got 0",
            "2x65:T4        | group 1: field 'GPUs per node': must be in 1..64, got 65",
            "2x1.5:T4       | field 'GPUs per node': must be a positive integer, got '1.5'",
            "2x8:B200       | cluster spec '2x8:B200' group 1: field 'gpu model': unknown GPU model 'B200'; known: V100-16GB, V100-32GB, T4",
            "2x8:           | group 1: field 'gpu model': is missing",
            "2x8:T4,        | cluster spec '2x8:T4,' group 2: is empty",
            "2x8:T4:foo=1   | group 1: field 'foo': unknown option; known: oversub, split",
            "2x8:T4:oversub=0.5 | field 'oversub': must be in [1, 16], got 0.5",
            "2x8:T4:split   | field 'split': expected OPTION=VALUE",
            "2x8:T4:split=2:split=3 | field 'split': is given twice",
            "99999x8:T4,99999x8:T4 | group 2: field 'count': the cluster would have more than 100000 nodes",
            "99999999999x8:T4 | field 'node count': must be in 1..100000, got 99999999999",
    })
    void malformedSpecsNameTheGroupAndTheRule(String spec, String message) {
        assertThatThrownBy(() -> parse(spec)).isInstanceOf(SpecException.class).hasMessageContaining(message);
    }

    @Test
    void emptySpecIsRefused() {
        assertThatThrownBy(() -> parse("  ")).isInstanceOf(SpecException.class).hasMessageContaining("cluster spec: is empty");
        assertThatThrownBy(() -> parse(null)).isInstanceOf(SpecException.class);
    }

    @Test
    void fileArgumentsMustExistAndBeYaml() throws IOException {
        String missing = dir.resolve("missing.yaml").toString();
        assertThatThrownBy(() -> parse(missing)).isInstanceOf(SpecException.class)
                .hasMessage("cluster file '" + missing + "': does not exist or is not a file");
        Path txt = write("cluster.txt", "nodes: []\n");
        assertThatThrownBy(() -> parse(txt.toString())).isInstanceOf(SpecException.class)
                .hasMessageContaining("must end in .yaml or .yml");
    }

    // ------------------------------------------------------------------ YAML files

    private static final String EXAMPLE = """
            defaults: {memoryOversubscription: 1.0, splitCount: 8, labels: {zone: z1}}
            groups:                     # shorthand, same as the SPEC string
              - {count: 4, gpus: 8, model: A100-80GB, memoryOversubscription: 1.5}
              - {count: 2, gpus: 4, model: NVIDIA L4, namePrefix: infer, labels: {tier: cheap}}
            nodes:                      # explicit nodes
              - name: dgx-01
                model: H100-80GB
                gpus: 8
                cpuMilli: 112000
                memoryMib: 2097152
                nvlinkDomains: [[0,1,2,3,4,5,6,7]]
                unhealthyGpus: [3]
                labels: {rack: r1}
              - name: mixed-01
                gpus:
                  - T4
                  - {model: L4, uuid: GPU-00000000-0000-0000-0000-000000000001, healthy: false}
            """;

    @Test
    void yamlExampleBuildsGroupsAndExplicitNodes() throws IOException {
        ClusterSpec c = parse(write("cluster.yaml", EXAMPLE).toString());
        assertThat(c.nodes()).extracting(NodeSpec::name).containsExactly(
                "a100-80gb-0000", "a100-80gb-0001", "a100-80gb-0002", "a100-80gb-0003",
                "infer-0000", "infer-0001", "dgx-01", "mixed-01");

        NodeSpec a100 = c.nodes().getFirst();
        assertThat(a100.memoryOversubscription()).isEqualTo(1.5);
        assertThat(a100.splitCount()).isEqualTo(8);
        assertThat(a100.cpuMilli()).isEqualTo(96_000);
        assertThat(a100.nvlinkDomains()).containsExactly(List.of(0, 1, 2, 3, 4, 5, 6, 7));
        assertThat(a100.labels()).isEqualTo(Map.of("zone", "z1"));
        assertThat(a100.gpus().getFirst().uuid()).isEqualTo(ClusterSpecs.gpuUuid("a100-80gb-0000", 0));

        NodeSpec l4 = node(c, "infer-0001");
        assertThat(l4.gpus()).hasSize(4).allSatisfy(g -> assertThat(g.model().id()).isEqualTo("L4"));
        assertThat(l4.memoryOversubscription()).isEqualTo(1.0);
        assertThat(l4.labels()).isEqualTo(Map.of("zone", "z1", "tier", "cheap"));

        NodeSpec dgx = node(c, "dgx-01");
        assertThat(dgx.cpuMilli()).isEqualTo(112_000);
        assertThat(dgx.memoryMib()).isEqualTo(2_097_152);
        assertThat(dgx.gpus()).extracting(GpuDevice::healthy).containsExactly(true, true, true, false, true, true, true, true);
        assertThat(dgx.labels()).isEqualTo(Map.of("zone", "z1", "rack", "r1"));

        NodeSpec mixed = node(c, "mixed-01");
        assertThat(mixed.gpus()).extracting(g -> g.model().id()).containsExactly("T4", "L4");
        assertThat(mixed.gpus().get(1).uuid()).isEqualTo("GPU-00000000-0000-0000-0000-000000000001");
        assertThat(mixed.gpus().get(1).healthy()).isFalse();
        assertThat(mixed.gpus().get(0).uuid()).matches(NVIDIA_UUID);
        assertThat(mixed.nvlinkDomains()).isEmpty();
        assertThat(mixed.cpuMilli()).isEqualTo(2 * ClusterSpecs.DEFAULT_CPU_MILLI_PER_GPU);
    }

    @Test
    void yamlPerGpuListTakesTheNodeModelAndDefaultWiring() throws IOException {
        String yaml = """
                defaults: {cpuMilliPerGpu: 16000, memoryMibPerGpu: 65536}
                nodes:
                  - name: box
                    model: RTX-3090
                    gpus: [{}, {healthy: false}, {}, {}]
                  - name: pcie-a100
                    model: NVIDIA A100 80GB PCIe
                    gpus: 2
                    nvlinkDomains: []
                """;
        ClusterSpec c = parse(write("c.yml", yaml).toString());
        NodeSpec box = node(c, "box");
        assertThat(box.gpus()).extracting(GpuDevice::healthy).containsExactly(true, false, true, true);
        assertThat(box.nvlinkDomains()).containsExactly(List.of(0, 1), List.of(2, 3));
        assertThat(box.cpuMilli()).isEqualTo(64_000);
        assertThat(box.memoryMib()).isEqualTo(4 * 65536L);
        assertThat(node(c, "pcie-a100").nvlinkDomains()).isEmpty();
    }

    @Test
    void yamlErrorsNameFileLineAndPath() throws IOException {
        String yaml = """
                groups:
                  - {count: 2, gpus: 8, model: T4}
                nodes:
                  - {name: a, model: T4, gpus: 1}
                  - {name: b, model: T4, gpus: 1}
                  - name: c
                    model: T4
                    gpus: eight
                """;
        Path f = write("bad.yaml", yaml);
        assertThatThrownBy(() -> parse(f.toString())).isInstanceOf(SpecException.class)
                .hasMessage(f + ":8: field 'nodes[2].gpus': must be an integer in 1..64, got 'eight'")
                .satisfies(e -> assertThat(((SpecException) e).field()).isEqualTo("nodes[2].gpus"));
    }

    @ParameterizedTest(name = "[{index}] {2}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
            // yaml (\n for newlines) | line | message after "file:line: "
            "nodez: []                                                         | 1 | field 'nodez': unknown key; known keys here: defaults, groups, nodes",
            "groups:\\n  - {count: 2, gpus: 8, model: B200}                    | 2 | field 'groups[0].model': unknown GPU model 'B200'; known: V100-16GB",
            "groups:\\n  - {count: 0, gpus: 8, model: T4}                      | 2 | field 'groups[0].count': must be in 1..100000, got 0",
            "groups:\\n  - {count: 2, model: T4}                               | 2 | field 'groups[0].gpus': is required",
            "groups:\\n  - {count: 2, gpus: 8, model: T4, colour: red}         | 2 | field 'groups[0].colour': unknown key",
            "groups: {count: 2}                                                | 1 | field 'groups': must be a list",
            "nodes:\\n  - {name: a, gpus: 2}                                   | 2 | field 'nodes[0].model': is required when 'gpus' is a count",
            "nodes:\\n  - {name: a, model: T4, gpus: 2, nvlinkDomains: [[0,2]]} | 2 | field 'nodes[0].nvlinkDomains[0]': must be in 0..1, got 2",
            "nodes:\\n  - {name: a, model: T4, gpus: 4, nvlinkDomains: [[0,1],[1,2]]} | 2 | field 'nodes[0].nvlinkDomains[1]': GPU 1 is in two NVLink domains",
            "nodes:\\n  - {name: a, model: T4, gpus: 2, unhealthyGpus: [2]}     | 2 | field 'nodes[0].unhealthyGpus': must be in 0..1, got 2",
            "nodes:\\n  - {name: a, model: T4, gpus: 2, memoryOversubscription: 0.9} | 2 | field 'nodes[0].memoryOversubscription': must be in [1, 16], got 0.9",
            "nodes:\\n  - {name: 'bad name', model: T4, gpus: 2}               | 2 | field 'nodes[0].name': must be 1..253 letters",
            "nodes:\\n  - {name: a, model: T4, gpus: 1}\\n  - {name: a, model: T4, gpus: 1} | 3 | field 'nodes[1].name': node name 'a' is already used at ",
            "groups:\\n  - {count: 1, gpus: 1, model: T4}\\nnodes:\\n  - {name: t4-0000, model: T4, gpus: 1} | 4 | field 'nodes[0].name': node name 't4-0000' is already used at ",
            "nodes:\\n  - {name: a, gpus: [{model: T4, uuid: GPU-1}, {model: T4, uuid: GPU-1}]} | 2 | field 'nodes[0].gpus': GPU UUID 'GPU-1' is already used at ",
            "nodes:\\n  - {name: a, gpus: [{uuid: GPU-1}]}                     | 2 | field 'nodes[0].gpus[0].model': is required (the node gives no model)",
            "nodes:\\n  - {name: a, model: T4, gpus: 1, labels: [x]}          | 2 | field 'nodes[0].labels': must be a mapping of label: value",
            "nodes:\\n  - name: a\\n    name: b                                | 3 | field 'nodes[0].name': is given twice",
            "nodes:\\n  - {name: a, model: T4, gpus: }                         | 2 | field 'nodes[0].gpus': has no value",
            "defaults: {splitCount: 0}\\nnodes: []                             | 1 | field 'defaults.splitCount': must be in 1..1000, got 0",
            "defaults: {memoryOversubscription: 1.2}                           | 1 | needs 'groups:' or 'nodes:' (or both)",
            "nodes: []                                                         | 1 | describes no nodes",
            "- a\\n- b                                                         | 1 | the file must be a mapping (key: value)",
            "nodes:\\n  - {name: a, model: T4, gpus: 1\\n                      | 3 | not valid YAML",
    })
    void malformedYamlIsRefusedWithItsLocation(String yaml, int line, String message) throws IOException {
        Path f = write("c.yaml", yaml.replace("\\n", "\n"));
        String prefix = f + ":" + line;
        assertThatThrownBy(() -> parse(f.toString())).isInstanceOf(SpecException.class)
                .hasMessageStartingWith(prefix)
                .hasMessageContaining(message);
    }

    @Test
    void theExampleInTheDocsParses() throws IOException {
        // Keeps docs/gpu-catalog.md honest: its first yaml block must be a valid cluster file.
        String root = System.getProperty("gpupool.repo.root");
        Path doc = root == null ? null : Path.of(root, "docs", "gpu-catalog.md");
        Assumptions.assumeTrue(doc != null && Files.exists(doc), "docs/gpu-catalog.md not found");
        String md = Files.readString(doc);
        int start = md.indexOf("```yaml\n") + "```yaml\n".length();
        String yaml = md.substring(start, md.indexOf("```", start));
        ClusterSpec c = ClusterSpecs.parse(write("doc.yaml", yaml).toString(), catalog);
        assertThat(c.nodes()).extracting(NodeSpec::name).contains("a100-80gb-0000", "infer-0001", "dgx-01", "lab-box");
        assertThat(node(c, "lab-box").gpus()).extracting(g -> g.model().id()).containsExactly("T4", "L4", "T4");
    }

    @Test
    void emptyYamlFileIsRefused() throws IOException {
        Path f = write("empty.yaml", "# nothing here\n");
        assertThatThrownBy(() -> parse(f.toString())).isInstanceOf(SpecException.class)
                .hasMessage(f + ": is empty; expected 'groups:' and/or 'nodes:'");
    }
}
