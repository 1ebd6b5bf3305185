package io.gpupool.k8s;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.TenantConfig;
import io.gpupool.engine.config.ConfigException;
import io.gpupool.engine.config.ConfigNode;
import io.gpupool.engine.config.ConfigNode.Mapping;
import io.gpupool.engine.config.PoolConfig;
import io.gpupool.engine.config.PoolConfigReader;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Settings of both Kubernetes modes, from a YAML file (the ConfigMap in deploy/): the configuration tree that the
 * simulator and the service read (docs/configuration.md), with the Kubernetes-only keys beside it:
 * <pre>
 * schedulerName: gpupool        # pods with this spec.schedulerName are the secondary scheduler's
 * defaultSplitCount: 10         # tasks per GPU on nodes without HAMi's registration
 * defaultMemoryScaling: 1.0     # memory oversubscription on those nodes
 * policy: fair-share            # or {name: fair-share, args: {halfLifeMs: 3600000}}
 * placement: binpack,topology   # or {scorers: {binpack: 1, topology: 1}, gpuPolicy: null, candidateLimit: 32}
 * tenants:                      # a namespace not listed is a tenant of its own
 *   vision: {weight: 2, guaranteedGpus: 8, limitGpus: 16, namespaces: [vision, vision-dev]}
 * defaultRuntime: 1h
 * </pre>
 * A tenant's {@code namespaces} (default: its own name) is the one Kubernetes-only key inside the tree. The list
 * form of tenants ({@code - name: vision} with the same keys) of earlier files reads as a shorthand. The drivers
 * choose no run-time predictor: a {@code predictor} key is an error.
 *
 * @param pool              the configuration tree
 * @param tenantOfNamespace namespace -> tenant, for the namespaces the file names
 */
public record K8sConfig(String schedulerName, PoolConfig pool, int defaultSplitCount, double defaultMemoryScaling,
                        Map<String, String> tenantOfNamespace) {
    private static final List<String> OWN_KEYS = List.of("schedulerName", "defaultSplitCount", "defaultMemoryScaling");
    private static final List<String> LISTED_TENANT_KEYS = List.of("name", "namespaces", "weight", "guaranteedGpus", "limitGpus");
    /** The policies that need no true run times, no predictor: what the drivers can run. */
    private static final PoolConfigReader READER = PoolConfigReader.standard().withoutOraclePolicies().predictors(List.of());

    public K8sConfig {
        if (schedulerName == null || schedulerName.isBlank()) throw new SpecException("config", "schedulerName", "must not be empty");
        tenantOfNamespace = Map.copyOf(tenantOfNamespace);
    }

    public static K8sConfig defaults() {
        return new K8sConfig("gpupool", PoolConfig.defaults("fair-share"), NodeSpec.DEFAULT_SPLIT_COUNT, 1.0, Map.of());
    }

    public static K8sConfig load(Path path) throws NoSuchFileException {
        if (!Files.isRegularFile(path)) throw new NoSuchFileException(path.toString());
        String text;
        try {
            text = Files.readString(path, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new SpecException(path.toString(), null, "cannot be read as UTF-8 text: " + e.getMessage());
        }
        return from(ConfigNode.parseYaml(text, path.toString()));
    }

    /** The file's tree: its own keys, then the configuration tree over the defaults. */
    static K8sConfig from(ConfigNode root) {
        List<String> known = new ArrayList<>(OWN_KEYS);
        known.addAll(PoolConfigReader.KEYS);
        Mapping m = root.mapping("").allowOnly("", known);
        K8sConfig d = defaults();
        String name = m.has("schedulerName") ? m.get("schedulerName").text("schedulerName") : d.schedulerName();
        int split = m.has("defaultSplitCount") ? (int) m.get("defaultSplitCount").whole("defaultSplitCount", 1, 1_000_000) : d.defaultSplitCount();
        double scaling = d.defaultMemoryScaling();
        if (m.has("defaultMemoryScaling")) {
            ConfigNode s = m.get("defaultMemoryScaling");
            scaling = s.number("defaultMemoryScaling");
            if (!(scaling >= 1.0) || scaling > 16) throw s.error("defaultMemoryScaling", "must be in [1, 16], got " + s.describe());
        }
        Map<String, String> ofNamespace = new HashMap<>();
        Mapping tree = m.without(OWN_KEYS);
        if (m.has("tenants") && !m.get("tenants").isNull()) tree = tree.with("tenants", tenants(m.get("tenants"), ofNamespace));
        return new K8sConfig(name, READER.read(tree, d.pool()), split, scaling, ofNamespace);
    }

    /** The tenants as the tree's mapping (namespaces taken out and recorded), from the mapping or the older list. */
    private static Mapping tenants(ConfigNode n, Map<String, String> ofNamespace) {
        Map<String, ConfigNode> entries = new LinkedHashMap<>();
        Map<String, Integer> lines = new LinkedHashMap<>();
        if (n instanceof ConfigNode.Sequence s) {
            for (int i = 0; i < s.items().size(); i++) {
                String path = "tenants[" + i + "]";
                Mapping t = s.items().get(i).mapping(path).allowOnly(path, LISTED_TENANT_KEYS);
                if (!t.has("name")) throw t.error(path + ".name", "must be set");
                String name = t.get("name").text(path + ".name");
                if (entries.containsKey(name)) throw t.get("name").error(path + ".name", "tenant '" + name + "' appears twice");
                namespaces(t, name, path, ofNamespace);
                entries.put(name, t.without(List.of("name", "namespaces")));
                lines.put(name, t.line());
            }
            return new Mapping(entries, lines, n.source(), n.line());
        }
        Mapping m = n.mapping("tenants");
        for (String name : m.keys()) {
            String path = ConfigNode.child("tenants", name);
            ConfigNode entry = m.get(name);
            if (entry instanceof Mapping t) {
                namespaces(t, name, path, ofNamespace);
                entry = t.without(List.of("namespaces"));
            } else {
                namespaces(Mapping.empty(n.source()), name, path, ofNamespace);
            }
            entries.put(name, entry);
            lines.put(name, m.keyLine(name));
        }
        return new Mapping(entries, lines, m.source(), m.line());
    }

    private static void namespaces(Mapping tenant, String name, String path, Map<String, String> ofNamespace) {
        List<ConfigNode> given = tenant.has("namespaces") ? tenant.get("namespaces").list(path + ".namespaces") : null;
        List<String> names = new ArrayList<>();
        if (given == null) names.add(name);
        else for (int i = 0; i < given.size(); i++) names.add(given.get(i).text(path + ".namespaces[" + i + "]"));
        for (int i = 0; i < names.size(); i++) {
            String prev = ofNamespace.put(names.get(i), name);
            if (prev != null) {
                ConfigNode at = given == null ? tenant : given.get(i);
                throw new ConfigException(at.source(), at.line(), path + ".namespaces", ConfigException.Kind.VALUE,
                        "namespace '" + names.get(i) + "' already belongs to tenant " + prev);
            }
        }
    }

    /** The tenant a namespace's pods are charged to. */
    public String tenantOf(String namespace) {
        return tenantOfNamespace.getOrDefault(namespace, namespace);
    }

    public String policy() { return pool.policy().name(); }

    public PlacementConfig placement() { return pool.placement(); }

    public Map<String, TenantConfig> tenants() { return pool.tenants(); }

    public SchedulerConfig schedulerConfig() {
        return pool.toSchedulerConfig();
    }

    public K8sConfig withSchedulerName(String n) {
        return new K8sConfig(n, pool, defaultSplitCount, defaultMemoryScaling, tenantOfNamespace);
    }

    /** The {@code --policy} shorthand over the file's: the file's settings kept when it names the same policy. */
    public K8sConfig withPolicy(String p) {
        if (!READER.policies().contains(p)) {
            throw new SpecException("--policy", "policy", "unknown policy '" + p + "'; the Kubernetes drivers run: " + String.join(", ", READER.policies()));
        }
        return new K8sConfig(schedulerName, pool.withPolicy(p), defaultSplitCount, defaultMemoryScaling, tenantOfNamespace);
    }
}
