package io.gpupool.engine.config;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.TenantConfig;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.engine.policy.FairSharePolicy;
import io.gpupool.engine.policy.LasPolicy;
import io.gpupool.engine.policy.PriorityAgingPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The configuration tree: read from YAML and from plain values, written back, shorthands, and every error's place. */
class PoolConfigReaderTest {
    private static final PoolConfigReader READER = PoolConfigReader.standard().predictors(List.of("none", "global-median", "history", "gbt"));
    private static final PoolConfig FCFS = PoolConfig.defaults("fcfs");

    private static final String FULL = """
            policy:
              name: las
              args:
                thresholdsGpuSec: [600, 7200, 86400]
            placement:
              scorers: {spread: 2, topology: 1}
              gpuPolicy: fgd
              candidateLimit: 8
            tenants:
              vision: {weight: 2, guaranteedGpus: 8, limitGpus: 16}
              nlp: {weight: 0.5}
            predictor: {name: gbt}
            defaultRuntime: 90m
            """;

    private static PoolConfig yaml(String text) {
        return READER.readYaml(text, "pool.yaml", FCFS);
    }

    private static ConfigException error(String text) {
        try {
            yaml(text);
        } catch (ConfigException e) {
            return e;
        }
        throw new AssertionError("no ConfigException for:\n" + text);
    }

    @Test
    void aFullTreeReadsIntoTypedParts() {
        PoolConfig c = yaml(FULL);
        assertThat(c.policy().name()).isEqualTo("las");
        assertThat(c.policy().args()).isEqualTo(new LasPolicy.Args(List.of(600.0, 7200.0, 86_400.0)));
        assertThat(c.placement()).isEqualTo(new PlacementConfig(map("spread", 2.0, "topology", 1.0), "fgd", 8));
        assertThat(c.tenants()).containsExactly(Map.entry("vision", new TenantConfig("vision", 2, 8, 16)),
                Map.entry("nlp", new TenantConfig("nlp", 0.5, 0, 0)));
        assertThat(c.predictor()).isEqualTo(new PoolConfig.Predictor("gbt"));
        assertThat(c.defaultRuntimeMs()).isEqualTo(5_400_000);
    }

    @Test
    void theWrittenTreeReadsBackToAnEqualConfigAndSoDoesTheEngineConfig() {
        PoolConfig c = yaml(FULL);
        Map<String, Object> written = PoolConfigWriter.toMap(c);
        assertThat(READER.read(ConfigNode.of(written, "request body"), PoolConfig.defaults("fair-share"))).isEqualTo(c);
        assertThat(written.get("defaultRuntime")).isEqualTo("90m");
        assertThat(written.get("policy")).isEqualTo(Map.of("name", "las", "args", Map.of("thresholdsGpuSec", List.of(600.0, 7200.0, 86_400.0))));
        SchedulerConfig engine = c.toSchedulerConfig();
        assertThat(engine.policyArgs()).isEqualTo(c.policy().args());
        assertThat(PoolConfig.of(engine, c.predictor())).isEqualTo(c);
        // every policy's defaults survive the same trip
        for (String p : READER.policies()) {
            PoolConfig d = PoolConfig.defaults(p);
            assertThat(READER.read(ConfigNode.of(PoolConfigWriter.toMap(d), "x"), FCFS)).as(p).isEqualTo(d);
        }
    }

    @Test
    void theExampleFileOfTheRepositoryIsAValidTree() throws Exception {
        Path file = Path.of(System.getProperty("gpupool.repo.root", "..")).resolve("examples/pool-config.yaml");
        PoolConfig c = READER.readYaml(Files.readString(file), file.toString(), FCFS);
        assertThat(c.policy().args()).isEqualTo(LasPolicy.Args.DEFAULTS);
        assertThat(c.tenants()).containsKeys("team-a", "team-b", "team-c");
        assertThat(c.tenants().get("team-a").guaranteedGpus()).isEqualTo(16);
        assertThat(c.placement()).isEqualTo(PlacementConfig.defaults());
        assertThat(c.defaultRuntimeMs()).isEqualTo(SchedulerConfig.DEFAULT_RUNTIME_MS);
    }

    @Test
    void theFullExampleOfTheDocumentationIsAValidTree() throws Exception {
        String doc = Files.readString(Path.of(System.getProperty("gpupool.repo.root", "..")).resolve("docs/configuration.md"));
        int start = doc.indexOf("```yaml\n") + "```yaml\n".length();
        PoolConfig c = READER.readYaml(doc.substring(start, doc.indexOf("```", start)), "docs/configuration.md", FCFS);
        assertThat(c.policy().args()).isEqualTo(LasPolicy.Args.DEFAULTS);
        assertThat(c.tenants().get("nlp")).isEqualTo(new TenantConfig("nlp", 1, 8, 0));
        assertThat(c.tenants().get("research")).isEqualTo(TenantConfig.defaultFor("research"));
        assertThat(c.predictor().name()).isEqualTo("history");
    }

    @Test
    void shorthandsReadIntoTheSameTreeAsTheLongForm() {
        assertThat(yaml("policy: las")).isEqualTo(yaml("policy: {name: las}")).isEqualTo(FCFS.withPolicy("las"));
        assertThat(yaml("placement: 'binpack:2,topology;gpu=fgd;limit=8'"))
                .isEqualTo(yaml("placement: {scorers: {binpack: 2, topology: 1}, gpuPolicy: fgd, candidateLimit: 8}"))
                .isEqualTo(FCFS.withPlacement(PlacementConfig.parse("binpack:2,topology;gpu=fgd;limit=8")));
        assertThat(yaml("placement: {scorers: {binpack, topology}}")).isEqualTo(yaml("placement: binpack,topology"));
        assertThat(yaml("predictor: gbt")).isEqualTo(yaml("predictor: {name: gbt}"));
        assertThat(yaml("defaultRuntime: 5400")).isEqualTo(yaml("defaultRuntime: 1.5h")).isEqualTo(yaml("defaultRuntime: 90m"));
        // the same JSON (here as plain values) reads like the YAML
        assertThat(READER.read(ConfigNode.of(Map.of("policy", "las", "placement", "spread"), "request body"), FCFS))
                .isEqualTo(yaml("policy: las\nplacement: spread"));
        // and a shorthand written back from the tree reads to the same placement
        PlacementConfig p = yaml(FULL).placement();
        assertThat(PlacementConfig.parse(p.shorthand())).isEqualTo(p);
        assertThat(p.shorthand()).isEqualTo("spread:2,topology;gpu=fgd;limit=8");
        assertThat(PlacementConfig.defaults().shorthand()).isEqualTo("binpack,topology");
    }

    @Test
    void whatATreeLeavesOutKeepsTheBaseAndAPolicyKeepsItsSettingsWhileItsNameStays() {
        PoolConfig base = yaml(FULL);
        PoolConfig changed = READER.read(ConfigNode.of(Map.of("placement", Map.of("candidateLimit", 0), "tenants", Map.of("nlp", Map.of("limitGpus", 4))), "b"), base);
        assertThat(changed.placement()).isEqualTo(new PlacementConfig(map("spread", 2.0, "topology", 1.0), "fgd", 0));
        assertThat(changed.tenants().get("nlp")).isEqualTo(new TenantConfig("nlp", 0.5, 0, 4));
        assertThat(changed.tenants().get("vision")).isEqualTo(base.tenants().get("vision"));
        assertThat(changed.policy()).isEqualTo(base.policy());
        assertThat(READER.read(ConfigNode.of(Map.of("policy", "las"), "b"), base).policy()).isEqualTo(base.policy());
        assertThat(READER.read(ConfigNode.of(Map.of("policy", Map.of("args", Map.of("thresholdsGpuSec", List.of(10)))), "b"), base).policy().args())
                .isEqualTo(new LasPolicy.Args(List.of(10.0)));
        // another policy starts from its own defaults; its given settings replace those
        assertThat(READER.read(ConfigNode.of(Map.of("policy", "priority"), "b"), base).policy().args()).isEqualTo(PriorityAgingPolicy.Args.DEFAULTS);
        assertThat(READER.read(ConfigNode.of(Map.of("policy", Map.of("name", "fair-share", "args", Map.of("halfLifeMs", 60_000))), "b"), base)
                .policy().args()).isEqualTo(new FairSharePolicy.Args(60_000));
        assertThat(base.withPolicy("fcfs-backfill").withPolicy("las").policy().args()).isEqualTo(LasPolicy.Args.DEFAULTS);
        // null is the default where a default exists
        assertThat(READER.read(ConfigNode.of(mapOfNull("predictor"), "b"), base).predictor()).isNull();
        assertThat(READER.read(ConfigNode.of(Map.of("placement", mapOfNull("gpuPolicy")), "b"), base).placement().gpuPolicy()).isNull();
        assertThat(yaml("")).isEqualTo(FCFS);
    }

    @ParameterizedTest(name = "{index}: {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            policy:\\n  name: las\\n  args:\\n    thresholdsGpuSec:\\n      - 3600\\n      - 100          | policy.args.thresholdsGpuSec[1] | 6 | must be greater than 3600
            policy:\\n  name: las\\n  args: {thresholdsGpuSec: [3600, x]}                 | policy.args.thresholdsGpuSec[1] | 3 | must be a number
            policy:\\n  name: priority\\n  args:\\n    aging: 2                            | policy.args.aging               | 4 | agingPerHour, backfillDepth
            policy:\\n  name: fcfs\\n  args: {backfillDepth: 3}                            | policy.args.backfillDepth       | 3 | takes no settings
            policy:\\n  name: lottery                                                        | policy.name                     | 2 | fcfs, fcfs-backfill
            policy: [las]                                                                    | policy                          | 1 | must be a mapping
            policy:\\n  nmae: las                                                            | policy.nmae                     | 2 | name, args
            placement:\\n  scorers:\\n    binpack: 1\\n    packing: 2                      | placement.scorers.packing       | 4 | binpack, spread, best-fit, topology, fgd
            placement:\\n  scorers: {binpack: 0}                                             | placement.scorers.binpack       | 2 | must be > 0
            placement:\\n  scorers: {}                                                       | placement.scorers               | 2 | at least one scorer
            placement:\\n  gpuPolicy: tight                                                  | placement.gpuPolicy             | 2 | binpack, spread, fgd
            placement:\\n  candidateLimit: -1                                                | placement.candidateLimit        | 2 | 0..
            placement: 'binpack:x'                                                           | placement                       | 1 | weight must be a number
            tenants:\\n  vision:\\n    guaranteedGpus: 8\\n    limitGpus: 4                | tenants.vision.guaranteedGpus   | 3 | exceeds the limit
            tenants:\\n  vision:\\n    weight: 0                                           | tenants.vision.weight           | 3 | must be > 0
            tenants:\\n  vision:\\n    share: 2                                            | tenants.vision.share            | 3 | weight, guaranteedGpus, limitGpus
            tenants: [vision]                                                                | tenants                         | 1 | must be a mapping
            predictor: {name: oracle}                                                        | predictor.name                  | 1 | history, gbt
            defaultRuntime: soon                                                             | defaultRuntime                  | 1 | 90s, 30m, 1h
            defaultRuntime: -5                                                               | defaultRuntime                  | 1 | positive
            policy: las\\nqueue: fifo                                                        | queue                           | 2 | policy, placement, tenants, predictor, defaultRuntime
            policy: las\\npolicy: fcfs                                                       | policy                          | 2 | given twice
            policy: {name: las                                                               | ""                              | 1 | not valid YAML
            """)
    void everyErrorNamesItsPathAndLine(String text, String path, int line, String rule) {
        ConfigException e = error(text.replace("\\n", "\n"));
        assertThat(e.path()).isEqualTo(path);
        assertThat(e.line()).isEqualTo(line);
        assertThat(e.where()).isEqualTo("pool.yaml:" + line);
        assertThat(e.rule()).contains(rule);
    }

    @Test
    void aJsonBodyHasNoLinesAndWrongFormsAreToldApartFromBadValues() {
        ConfigException shape = assertThrows(() -> READER.read(ConfigNode.of(Map.of("placement", Map.of("candidateLimit", "all")), "request body"), FCFS));
        assertThat(shape.path()).isEqualTo("placement.candidateLimit");
        assertThat(shape.line()).isZero();
        assertThat(shape.where()).isEqualTo("request body");
        assertThat(shape.kind()).isEqualTo(ConfigException.Kind.SHAPE);
        ConfigException value = assertThrows(() -> READER.read(ConfigNode.of(Map.of("placement", Map.of("candidateLimit", -1)), "request body"), FCFS));
        assertThat(value.kind()).isEqualTo(ConfigException.Kind.VALUE);
    }

    @Test
    void aDriverNarrowsThePoliciesAndPredictorsItRuns() {
        PoolConfigReader service = PoolConfigReader.standard().withoutOraclePolicies().predictors(List.of());
        assertThat(service.policies()).doesNotContain("srtf-oracle").contains("las", "fair-share");
        ConfigException oracle = assertThrows(() -> service.readYaml("policy: srtf-oracle", "k.yaml", FCFS));
        assertThat(oracle.path()).isEqualTo("policy");
        assertThat(oracle.rule()).contains("not available here");
        assertThat(assertThrows(() -> service.readYaml("\npredictor: history", "k.yaml", FCFS)).where()).isEqualTo("k.yaml:2");
        // the engine alone does not know the predictors' names: any name passes to the driver
        assertThat(PoolConfigReader.standard().readYaml("predictor: anything", "p", FCFS).predictor().name()).isEqualTo("anything");
    }

    @Test
    void durationsReadAndWriteInTheirLargestWholeUnit() {
        assertThat(Durations.parseMs("90s")).isEqualTo(90_000);
        assertThat(Durations.parseMs("1.5h")).isEqualTo(5_400_000);
        assertThat(Durations.parseMs("250ms")).isEqualTo(250);
        assertThat(Durations.parseMs("3600")).isEqualTo(3_600_000);
        assertThat(Durations.parseMs("soon")).isEqualTo(-1);
        assertThat(Durations.parseMs("0s")).isEqualTo(-1);
        assertThat(Durations.format(3_600_000)).isEqualTo("1h");
        assertThat(Durations.format(86_400_000)).isEqualTo("1d");
        assertThat(Durations.format(90_000)).isEqualTo("90s");
        assertThat(Durations.format(1500)).isEqualTo("1500ms");
        assertThatThrownBy(() -> Durations.parseMs("x", "--fairness-window", "duration")).hasMessageContaining("--fairness-window");
    }

    private static ConfigException assertThrows(Runnable r) {
        try {
            r.run();
        } catch (ConfigException e) {
            return e;
        }
        throw new AssertionError("no ConfigException");
    }

    private static Map<String, Double> map(String k1, double v1, String k2, double v2) {
        Map<String, Double> m = new LinkedHashMap<>();
        m.put(k1, v1);
        m.put(k2, v2);
        return m;
    }

    private static Map<String, Object> mapOfNull(String key) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(key, null);
        return m;
    }
}
