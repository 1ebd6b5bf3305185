package io.gpupool.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class GpuCatalogTest {
    private final GpuCatalog catalog = GpuCatalog.standard();

    private GpuModel model(String id) {
        return catalog.all().stream().filter(m -> m.id().equals(id)).findFirst().orElseThrow();
    }

    @Test
    void standardIsASingletonWithTheCanonicalIdsInOrder() {
        assertThat(GpuCatalog.standard()).isSameAs(catalog);
        assertThat(catalog.all()).extracting(GpuModel::id).containsExactly(
                "V100-16GB", "V100-32GB", "T4", "A10", "L4", "L40S", "A100-40GB", "A100-80GB", "H100-80GB", "H200",
                "RTX-3090", "RTX-4090", "P100", "G2", "G3");
    }

    @Test
    void everyModelHasPlausibleFiguresAndASource() {
        for (GpuModel m : catalog.all()) {
            assertThat(m.memoryMib()).as(m.id()).isPositive();
            assertThat(m.memoryBandwidthGBs()).as(m.id()).isPositive();
            assertThat(m.tdpWatts()).as(m.id()).isPositive();
            // the simulator's energy model: a powered-on idle GPU draws something, and less than a busy one
            assertThat(m.idleWatts()).as(m.id()).isPositive().isLessThan(m.tdpWatts() / 2);
            assertThat(m.fp16Tflops()).as(m.id()).isPositive();
            assertThat(m.bf16Tflops()).as(m.id()).isGreaterThanOrEqualTo(0);
            assertThat(m.productName()).as(m.id()).isNotBlank();
            assertThat(m.source()).as(m.id()).isNotBlank();
            // A generation without bandwidth (or the reverse) would confuse topology scoring.
            assertThat(m.nvlinkGeneration() > 0).as(m.id()).isEqualTo(m.nvlinkBandwidthGBs() > 0);
        }
    }

    @Test
    void bf16IsZeroExactlyWhereTheCardHasNone() {
        Set<String> noBf16 = Set.of("V100-16GB", "V100-32GB", "T4", "P100", "G2", "G3");
        for (GpuModel m : catalog.all()) {
            if (noBf16.contains(m.id())) assertThat(m.bf16Tflops()).as(m.id()).isZero();
            else assertThat(m.bf16Tflops()).as(m.id()).isPositive();
        }
    }

    @Test
    void dataSheetFiguresSpotCheck() {
        GpuModel a100 = model("A100-80GB");
        assertThat(a100.memoryMib()).isEqualTo(80 * 1024);
        assertThat(a100.bf16Tflops()).isEqualTo(312);
        assertThat(a100.memoryBandwidthGBs()).isEqualTo(2039);
        assertThat(a100.nvlinkGeneration()).isEqualTo(3);
        assertThat(a100.nvlinkBandwidthGBs()).isEqualTo(600);
        assertThat(model("A100-40GB").memoryBandwidthGBs()).isEqualTo(1555);
        assertThat(model("V100-32GB").nvlinkBandwidthGBs()).isEqualTo(300);
        assertThat(model("V100-32GB").nvlinkGeneration()).isEqualTo(2);
        assertThat(model("H100-80GB").nvlinkBandwidthGBs()).isEqualTo(900);
        assertThat(model("H100-80GB").bf16Tflops()).isEqualTo(989.4);
        assertThat(model("H200").memoryMib()).isEqualTo(141 * 1024);
        assertThat(model("H200").memoryBandwidthGBs()).isEqualTo(4800);
        assertThat(model("RTX-3090").nvlinkBandwidthGBs()).isEqualTo(112.5);
        assertThat(model("RTX-4090").hasNvlink()).isFalse();
        assertThat(model("T4").tdpWatts()).isEqualTo(70);
        assertThat(model("V100-32GB").idleWatts()).isEqualTo(40);
        assertThat(model("L4").fp16Tflops()).isEqualTo(121);
        for (String pcie : List.of("T4", "A10", "L4", "L40S", "RTX-4090", "P100", "G2", "G3")) {
            assertThat(model(pcie).hasNvlink()).as(pcie).isFalse();
        }
    }

    @Test
    void undisclosedTraceModelsSayTheirFiguresArePlaceholders() {
        for (String id : List.of("G2", "G3")) {
            assertThat(model(id).source()).contains("undisclosed model in Alibaba cluster-trace-gpu-v2023")
                    .contains("figures are placeholders");
            assertThat(model(id).memoryMib()).isEqualTo(16 * 1024);
        }
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
            // canonical ids, any case and separator
            "V100-16GB, V100-16GB", "v100-32gb, V100-32GB", "t4, T4", "a100_80gb, A100-80GB", "h100 80gb, H100-80GB",
            "rtx-3090, RTX-3090", "RTX3090, RTX-3090", "rtx 4090, RTX-4090", "p100, P100", "h200, H200", "l40s, L40S",
            // Alibaba openb trace codes
            "V100M16, V100-16GB", "v100m32, V100-32GB", "G2, G2", "g3, G3",
            // NVIDIA GPU feature discovery labels (nvidia.com/gpu.product)
            "NVIDIA-A100-SXM4-80GB, A100-80GB", "NVIDIA-A100-SXM4-40GB, A100-40GB", "NVIDIA-H100-80GB-HBM3, H100-80GB",
            "Tesla-V100-SXM2-32GB, V100-32GB", "Tesla-V100-SXM2-16GB, V100-16GB", "Tesla-T4, T4",
            "NVIDIA-GeForce-RTX-4090, RTX-4090", "NVIDIA-A100-SXM4-80GB-SHARED, A100-80GB",
            // nvidia-smi --query-gpu=name
            "NVIDIA H100 80GB HBM3, H100-80GB", "NVIDIA A100-SXM4-40GB, A100-40GB", "Tesla V100-SXM2-16GB, V100-16GB",
            "NVIDIA GeForce RTX 4090, RTX-4090", "NVIDIA GeForce RTX 3090, RTX-3090", "NVIDIA L40S, L40S",
            "NVIDIA A10, A10", "NVIDIA L4, L4", "NVIDIA H200, H200", "Tesla P100-PCIE-16GB, P100",
            "NVIDIA A100 80GB PCIe, A100-80GB", "NVIDIA A100-PCIE-40GB, A100-40GB", "Tesla V100-PCIE-32GB, V100-32GB",
            "NVIDIA H100 PCIe, H100-80GB", "NVIDIA H200 141GB HBM3e, H200",
    })
    void resolvesIdsAliasesAndProductStrings(String name, String id) {
        assertThat(catalog.find(name)).map(GpuModel::id).hasValue(id);
    }

    @Test
    void a10IsNotA100AndL40IsNotL40s() {
        assertThat(catalog.find("A10")).map(GpuModel::id).hasValue("A10");
        assertThat(catalog.find("NVIDIA-A10")).map(GpuModel::id).hasValue("A10");
        assertThat(catalog.find("A100")).map(GpuModel::id).hasValue("A100-40GB");
        assertThat(catalog.find("NVIDIA A100")).map(GpuModel::id).hasValue("A100-40GB");
        assertThat(catalog.find("A10G")).isEmpty();
        assertThat(catalog.find("NVIDIA L40")).isEmpty();
        assertThat(catalog.find("A1")).isEmpty();
        assertThat(catalog.find("H10")).isEmpty();
    }

    @Test
    void memorySizePicksTheVariantAndNoSizePicksTheSmallest() {
        assertThat(catalog.find("V100")).map(GpuModel::id).hasValue("V100-16GB");
        assertThat(catalog.find("Tesla V100")).map(GpuModel::id).hasValue("V100-16GB");
        assertThat(catalog.find("V100 32GB")).map(GpuModel::id).hasValue("V100-32GB");
        assertThat(catalog.find("V100-32G")).map(GpuModel::id).hasValue("V100-32GB");
        assertThat(catalog.find("A100")).map(GpuModel::id).hasValue("A100-40GB");
        assertThat(catalog.find("A100 80GB")).map(GpuModel::id).hasValue("A100-80GB");
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "Tesla P100-PCIE-12GB",              // a size the catalog does not have: not the 16 GB card
            "NVIDIA H100 NVL",                   // 94 GB part: a leftover word refuses it
            "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",  // a MIG slice is not a whole A100
            "A100 40GB 80GB",                    // two sizes: ambiguous
            "V100S-PCIE-32GB", "NVIDIA", "Tesla", "B200", "RTX 5090", "", "   "})
    void refusesWhatItCannotIdentify(String name) {
        assertThat(catalog.find(name)).isEmpty();
    }

    @Test
    void nullFindsNothing() {
        assertThat(catalog.find(null)).isEmpty();
    }

    @Test
    void everyAliasResolvesToItsOwnModel() {
        for (GpuModel m : catalog.all()) {
            assertThat(catalog.find(m.id())).as(m.id()).containsSame(m);
            for (String alias : m.aliases()) assertThat(catalog.find(alias)).as(alias).containsSame(m);
        }
    }

    @Test
    void requireNamesThePlaceAndListsKnownIds() {
        assertThatThrownBy(() -> catalog.require("B200", "trace.csv:7 column gpu_type"))
                .isInstanceOf(SpecException.class)
                .hasMessage("trace.csv:7 column gpu_type: field 'gpu model': unknown GPU model 'B200'; known: "
                        + "V100-16GB, V100-32GB, T4, A10, L4, L40S, A100-40GB, A100-80GB, H100-80GB, H200, "
                        + "RTX-3090, RTX-4090, P100, G2, G3")
                .satisfies(e -> assertThat(((SpecException) e).where()).isEqualTo("trace.csv:7 column gpu_type"));
        assertThat(catalog.require("nvidia-a100-sxm4-80gb", "x").id()).isEqualTo("A100-80GB");
    }

    @Test
    void defaultNvlinkDomainsFollowEachModelsWiring() {
        assertThat(GpuCatalog.defaultNvlinkDomains(model("A100-80GB"), 8)).containsExactly(List.of(0, 1, 2, 3, 4, 5, 6, 7));
        assertThat(GpuCatalog.defaultNvlinkDomains(model("H100-80GB"), 4)).containsExactly(List.of(0, 1, 2, 3));
        assertThat(GpuCatalog.defaultNvlinkDomains(model("H200"), 8)).hasSize(1);
        // DGX-1: two fully connected quads
        assertThat(GpuCatalog.defaultNvlinkDomains(model("V100-32GB"), 8)).containsExactly(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7));
        assertThat(GpuCatalog.defaultNvlinkDomains(model("V100-16GB"), 4)).containsExactly(List.of(0, 1, 2, 3));
        assertThat(GpuCatalog.defaultNvlinkDomains(model("RTX-3090"), 4)).containsExactly(List.of(0, 1), List.of(2, 3));
        assertThat(GpuCatalog.defaultNvlinkDomains(model("RTX-3090"), 5)).containsExactly(List.of(0, 1), List.of(2, 3));
        assertThat(GpuCatalog.defaultNvlinkDomains(model("T4"), 8)).isEmpty();
        assertThat(GpuCatalog.defaultNvlinkDomains(model("RTX-4090"), 8)).isEmpty();
        assertThat(GpuCatalog.defaultNvlinkDomains(model("A100-80GB"), 1)).isEmpty();
    }

    @Test
    void defaultNvlinkDomainsForAModelOutsideTheCatalog() {
        GpuModel custom = new GpuModel("X1", "Custom", 1024, 1, 1, 1, 1, 4, 900, List.of(), "test");
        assertThat(GpuCatalog.defaultNvlinkDomains(custom, 3)).containsExactly(List.of(0, 1, 2));
        GpuModel pcie = new GpuModel("X2", "Custom", 1024, 1, 1, 1, 1, 0, 0, List.of(), "test");
        assertThat(GpuCatalog.defaultNvlinkDomains(pcie, 3)).isEmpty();
    }
}
