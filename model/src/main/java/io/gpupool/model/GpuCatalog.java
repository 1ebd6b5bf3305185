package io.gpupool.model;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The GPU models gpupool knows, with the figures of the vendor's data sheet, and the rules that turn a
 * name a user, a trace or a driver gives into one of them.
 *
 * <p>Resolution ({@link #find}) works in two steps:
 * <ol>
 *   <li>Exact: the canonical id or an alias, ignoring case and the separators space, '_' and '-'
 *       ({@code a100_80gb}, {@code V100M32}, {@code Tesla-T4}).</li>
 *   <li>Product string: upper-case, split on space/'_'/'-', drop vendor words (NVIDIA, TESLA, GEFORCE)
 *       and packaging words (SXM2..SXM5, PCIE, HBM2/2E/3/3E, SHARED: GPU feature discovery's suffix for
 *       time-sliced GPUs), take one memory size token ({@code 80GB}, {@code 80G}), join what is left
 *       into a family ({@code A100}, {@code RTX4090}) and pick the family member of that memory size.
 *       Without a size the smallest member is taken ({@code V100} is V100-16GB, {@code A100} is
 *       A100-40GB), so a pool never promises memory a card may lack. A size no member has, or any
 *       word left over ({@code MIG}, {@code NVL}, {@code A10G}), matches nothing: an unknown card is
 *       refused rather than mistaken for a near relative.</li>
 * </ol>
 * Tokens are compared whole, so {@code A10} never matches {@code A100} and {@code L40} never {@code L40S}.
 */
public final class GpuCatalog {

    /** How a model's GPUs are wired inside one server; drives {@link #defaultNvlinkDomains}. */
    private enum Topology { NONE, NVSWITCH, HYBRID_CUBE_MESH, BRIDGED_PAIRS }

    /** A catalog row: the model plus what resolution and topology need but {@link GpuModel} does not carry. */
    private record Entry(GpuModel model, String family, Topology topology) {}

    private static final Pattern SEPARATORS = Pattern.compile("[\\s_\\-]+");
    private static final Pattern SIZE_TOKEN = Pattern.compile("(\\d{1,4})(?:GB|G|GIB)");
    private static final Set<String> VENDOR_WORDS = Set.of("NVIDIA", "TESLA", "GEFORCE");
    private static final Set<String> PACKAGING_WORDS = Set.of(
            "SXM", "SXM2", "SXM3", "SXM4", "SXM5", "PCIE", "HBM2", "HBM2E", "HBM3", "HBM3E", "SHARED");

    /**
     * Idle power per model (W): a powered-on GPU running nothing. Data sheets do not give it; these are round figures of
     * the order idle GPUs of each class report (docs/gpu-catalog.md, "Idle power"), assumptions for the simulator's energy
     * estimates, not measurements. G2 and G3 take V100's, like their other placeholders.
     */
    private static final Map<String, Integer> IDLE_WATTS = Map.ofEntries(
            Map.entry("V100-16GB", 40), Map.entry("V100-32GB", 40), Map.entry("T4", 10), Map.entry("A10", 20),
            Map.entry("L4", 15), Map.entry("L40S", 35), Map.entry("A100-40GB", 50), Map.entry("A100-80GB", 60),
            Map.entry("H100-80GB", 70), Map.entry("H200", 75), Map.entry("RTX-3090", 25), Map.entry("RTX-4090", 20),
            Map.entry("P100", 30), Map.entry("G2", 40), Map.entry("G3", 40));

    // Declared after the patterns and the idle figures it uses: static fields initialise in text order.
    private static final GpuCatalog STANDARD = new GpuCatalog(standardEntries());

    private final List<GpuModel> models;
    private final Map<String, Entry> byId = new HashMap<>();
    private final Map<String, GpuModel> byExactKey = new HashMap<>();
    /** family -> members, smallest memory first (the default when a name gives no size). */
    private final Map<String, List<GpuModel>> byFamily = new LinkedHashMap<>();
    private final String knownIds;

    private GpuCatalog(List<Entry> entries) {
        List<GpuModel> list = new ArrayList<>();
        for (Entry e : entries) {
            GpuModel m = e.model();
            list.add(m);
            byId.put(m.id(), e);
            putExact(compact(m.id()), m);
            for (String a : m.aliases()) putExact(compact(a), m);
            if (e.family() != null) byFamily.computeIfAbsent(e.family(), f -> new ArrayList<>()).add(m);
        }
        for (List<GpuModel> members : byFamily.values()) {
            members.sort(Comparator.comparingInt(GpuModel::memoryMib));
        }
        models = List.copyOf(list);
        knownIds = models.stream().map(GpuModel::id).collect(Collectors.joining(", "));
    }

    private void putExact(String key, GpuModel m) {
        GpuModel old = byExactKey.putIfAbsent(key, m);
        // A name that resolves to two models would make SPECs ambiguous: fail at class load, not at run time.
        if (old != null && old != m) throw new IllegalStateException("catalog name '" + key + "' names both " + old.id() + " and " + m.id());
    }

    /** The built-in catalog. */
    public static GpuCatalog standard() {
        return STANDARD;
    }

    /** Every model, in catalog order. */
    public List<GpuModel> all() {
        return models;
    }

    /** The model a canonical id, alias or vendor product string names; empty if none (see the class comment). */
    public Optional<GpuModel> find(String nameOrAlias) {
        if (nameOrAlias == null || nameOrAlias.isBlank()) return Optional.empty();
        GpuModel exact = byExactKey.get(compact(nameOrAlias));
        if (exact != null) return Optional.of(exact);

        StringBuilder family = new StringBuilder();
        Integer sizeGb = null;
        for (String token : SEPARATORS.split(nameOrAlias.trim().toUpperCase(Locale.ROOT))) {
            if (token.isEmpty() || VENDOR_WORDS.contains(token) || PACKAGING_WORDS.contains(token)) continue;
            Matcher size = SIZE_TOKEN.matcher(token);
            if (size.matches()) {
                if (sizeGb != null) return Optional.empty(); // two sizes: ambiguous
                sizeGb = Integer.parseInt(size.group(1));
                continue;
            }
            family.append(token);
        }
        List<GpuModel> members = byFamily.get(family.toString());
        if (members == null) return Optional.empty();
        if (sizeGb == null) return Optional.of(members.getFirst());
        int gb = sizeGb;
        return members.stream().filter(m -> memoryGb(m) == gb).findFirst();
    }

    /** Like {@link #find}, but an unknown name is a {@link SpecException} at {@code where} that lists the known ids. */
    public GpuModel require(String nameOrAlias, String where) {
        return find(nameOrAlias).orElseThrow(() -> new SpecException(where, "gpu model",
                "unknown GPU model '" + nameOrAlias + "'; known: " + knownIds));
    }

    /**
     * The NVLink domains a server of {@code gpuCount} GPUs of model {@code m} has unless told otherwise:
     * NVSwitch parts (A100, H100, H200) one domain of all GPUs; V100 two fully connected quads when there
     * are 8 (DGX-1 hybrid cube-mesh), otherwise one domain; RTX-3090 bridged pairs (0,1), (2,3), ...;
     * models without NVLink none. A model not in the standard catalog with NVLink gets one domain.
     */
    public static List<List<Integer>> defaultNvlinkDomains(GpuModel m, int gpuCount) {
        if (m == null || !m.hasNvlink() || gpuCount < 2) return List.of();
        Entry e = STANDARD.byId.get(m.id());
        Topology t = e != null ? e.topology() : Topology.NVSWITCH;
        return switch (t) {
            case NONE -> List.of();
            case NVSWITCH -> List.of(range(0, gpuCount));
            case HYBRID_CUBE_MESH -> gpuCount == 8 ? List.of(range(0, 4), range(4, 8)) : List.of(range(0, gpuCount));
            case BRIDGED_PAIRS -> IntStream.range(0, gpuCount / 2).mapToObj(p -> range(2 * p, 2 * p + 2)).toList();
        };
    }

    private static List<Integer> range(int from, int to) {
        return IntStream.range(from, to).boxed().toList();
    }

    /** Memory as the data sheet states it, in GB (the catalog stores data-sheet GB x 1024 MiB). */
    private static int memoryGb(GpuModel m) {
        return Math.round(m.memoryMib() / 1024f);
    }

    private static String compact(String s) {
        return SEPARATORS.matcher(s.trim().toUpperCase(Locale.ROOT)).replaceAll("");
    }

    /*
     * The built-in table. Memory is the data sheet's GB x 1024 MiB (the driver reports a few hundred MiB
     * less as usable; the agent reports what the driver says). Tensor figures are dense (the data sheets'
     * sparsity figures halved), BF16 0 where the card has none. NVLink bandwidth is the total per GPU.
     * Sources:
     *   V100       NVIDIA Tesla V100 GPU datasheet (2020): SXM2, 125 TFLOPS tensor, 900 GB/s, 300 W, NVLink2 300 GB/s
     *   T4         NVIDIA T4 Tensor Core GPU datasheet (2019): 65 TFLOPS FP16 mixed precision, 320 GB/s, 70 W
     *   A10        NVIDIA A10 Tensor Core GPU datasheet (2021): 125 TF BF16/FP16, 600 GB/s, 150 W
     *   L4         NVIDIA L4 Tensor Core GPU datasheet (2023): 242 TF with sparsity -> 121, 300 GB/s, 72 W
     *   L40S       NVIDIA L40S GPU datasheet (2023): 362.05 TF BF16/FP16, 864 GB/s, 350 W
     *   A100       NVIDIA A100 Tensor Core GPU datasheet (2021): SXM4, 312 TF, 1,555 / 2,039 GB/s, 400 W, NVLink3 600 GB/s
     *   H100       NVIDIA H100 Tensor Core GPU datasheet (2023): H100 SXM, 1,979 TF with sparsity -> 989.4, 3.35 TB/s, 700 W, NVLink4 900 GB/s
     *   H200       NVIDIA H200 Tensor Core GPU datasheet (2024): H200 SXM, 141 GB, 989.4 TF dense, 4.8 TB/s, 700 W, NVLink 900 GB/s
     *   RTX-3090   NVIDIA Ampere GA102 GPU Architecture whitepaper (2021, v2.0), appendix A: 71 TF FP16/BF16 with FP32
     *              accumulate (142 with FP16 accumulate), 936 GB/s, 350 W, NVLink3 bridge 112.5 GB/s between two GPUs
     *   RTX-4090   NVIDIA Ada GPU Architecture whitepaper (2023): 165.2 TF FP16/BF16 with FP32 accumulate, 1,008 GB/s, 450 W
     *   P100       NVIDIA Tesla P100 PCIe datasheet (2016): 16 GB, 18.7 TFLOPS FP16 (no tensor cores), 732 GB/s, 250 W
     *   G2, G3     undisclosed in Alibaba cluster-trace-gpu-v2023: placeholders, see their source field
     */
    private static List<Entry> standardEntries() {
        String v100 = "NVIDIA Tesla V100 GPU datasheet (2020), SXM2 variant";
        String a100 = "NVIDIA A100 Tensor Core GPU datasheet (2021), SXM4 variant";
        String placeholder = "undisclosed model in Alibaba cluster-trace-gpu-v2023; figures are placeholders "
                + "(16 GiB, V100-16GB-class throughput, no NVLink assumed), not measurements";
        return List.of(
                entry("V100-16GB", "NVIDIA Tesla V100 SXM2 16GB", 16, 0, 125, 900, 300, 2, 300,
                        "V100", Topology.HYBRID_CUBE_MESH, v100,
                        "V100M16", "V100", "Tesla-V100-SXM2-16GB", "Tesla V100-SXM2-16GB"),
                entry("V100-32GB", "NVIDIA Tesla V100 SXM2 32GB", 32, 0, 125, 900, 300, 2, 300,
                        "V100", Topology.HYBRID_CUBE_MESH, v100,
                        "V100M32", "Tesla-V100-SXM2-32GB", "Tesla V100-SXM2-32GB"),
                entry("T4", "NVIDIA T4", 16, 0, 65, 320, 70, 0, 0,
                        "T4", Topology.NONE, "NVIDIA T4 Tensor Core GPU datasheet (2019)",
                        "Tesla-T4", "Tesla T4"),
                entry("A10", "NVIDIA A10", 24, 125, 125, 600, 150, 0, 0,
                        "A10", Topology.NONE, "NVIDIA A10 Tensor Core GPU datasheet (2021)",
                        "NVIDIA-A10", "NVIDIA A10"),
                entry("L4", "NVIDIA L4", 24, 121, 121, 300, 72, 0, 0,
                        "L4", Topology.NONE, "NVIDIA L4 Tensor Core GPU datasheet (2023)",
                        "NVIDIA-L4", "NVIDIA L4"),
                entry("L40S", "NVIDIA L40S", 48, 362.05, 362.05, 864, 350, 0, 0,
                        "L40S", Topology.NONE, "NVIDIA L40S GPU datasheet (2023)",
                        "NVIDIA-L40S", "NVIDIA L40S"),
                entry("A100-40GB", "NVIDIA A100 40GB SXM4", 40, 312, 312, 1555, 400, 3, 600,
                        "A100", Topology.NVSWITCH, a100,
                        "A100", "NVIDIA-A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"),
                entry("A100-80GB", "NVIDIA A100 80GB SXM4", 80, 312, 312, 2039, 400, 3, 600,
                        "A100", Topology.NVSWITCH, a100,
                        "NVIDIA-A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe"),
                entry("H100-80GB", "NVIDIA H100 SXM5 80GB", 80, 989.4, 989.4, 3350, 700, 4, 900,
                        "H100", Topology.NVSWITCH, "NVIDIA H100 Tensor Core GPU datasheet (2023), H100 SXM",
                        "H100", "NVIDIA-H100-80GB-HBM3", "NVIDIA H100 80GB HBM3"),
                entry("H200", "NVIDIA H200 SXM 141GB", 141, 989.4, 989.4, 4800, 700, 4, 900,
                        "H200", Topology.NVSWITCH, "NVIDIA H200 Tensor Core GPU datasheet (2024), H200 SXM",
                        "NVIDIA-H200", "NVIDIA H200"),
                entry("RTX-3090", "NVIDIA GeForce RTX 3090", 24, 71, 71, 936, 350, 3, 112.5,
                        "RTX3090", Topology.BRIDGED_PAIRS,
                        "NVIDIA Ampere GA102 GPU Architecture whitepaper (2021), GeForce RTX 3090; "
                                + "tensor figures with FP32 accumulate; NVLink bridge joins two cards",
                        "RTX3090", "NVIDIA-GeForce-RTX-3090", "NVIDIA GeForce RTX 3090"),
                entry("RTX-4090", "NVIDIA GeForce RTX 4090", 24, 165.2, 165.2, 1008, 450, 0, 0,
                        "RTX4090", Topology.NONE,
                        "NVIDIA Ada GPU Architecture whitepaper (2023), GeForce RTX 4090; tensor figures with FP32 accumulate",
                        "RTX4090", "NVIDIA-GeForce-RTX-4090", "NVIDIA GeForce RTX 4090"),
                entry("P100", "NVIDIA Tesla P100 PCIe 16GB", 16, 0, 18.7, 732, 250, 0, 0,
                        "P100", Topology.NONE,
                        "NVIDIA Tesla P100 PCIe datasheet (2016), 16GB variant; no tensor cores: fp16 is the FP16 peak",
                        "Tesla-P100-PCIE-16GB", "Tesla P100-PCIE-16GB"),
                // G2/G3 have no family: only the trace codes themselves name them.
                entry("G2", "Alibaba openb G2 (undisclosed)", 16, 0, 125, 900, 300, 0, 0,
                        null, Topology.NONE, placeholder),
                entry("G3", "Alibaba openb G3 (undisclosed)", 16, 0, 125, 900, 300, 0, 0,
                        null, Topology.NONE, placeholder));
    }

    private static Entry entry(String id, String product, int memoryGb, double bf16, double fp16, double bandwidthGBs,
                               int tdpWatts, int nvlinkGen, double nvlinkGBs, String family, Topology topology,
                               String source, String... aliases) {
        Integer idle = IDLE_WATTS.get(id);
        if (idle == null) throw new IllegalStateException("no idle power for catalog model " + id);
        GpuModel m = new GpuModel(id, product, memoryGb * 1024, bf16, fp16, bandwidthGBs, tdpWatts, idle, nvlinkGen, nvlinkGBs,
                List.of(aliases), source);
        return new Entry(m, family, topology);
    }
}
