package io.gpupool.k8s;

import io.gpupool.engine.SchedulerConfig;
import io.gpupool.engine.TenantConfig;
import io.gpupool.engine.placement.PlacementConfig;
import io.gpupool.model.NodeSpec;
import io.gpupool.model.SpecException;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.dataformat.yaml.YAMLMapper;

import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Settings of both Kubernetes modes, from a YAML file (the ConfigMap in deploy/):
 * <pre>
 * schedulerName: gpupool        # pods with this spec.schedulerName are the secondary scheduler's
 * policy: fair-share            # queue policy (gpupool simulate --policy names)
 * placement: binpack,topology   # scorers, ;gpu=POLICY, ;limit=N
 * defaultSplitCount: 10         # tasks per GPU on nodes without HAMi's registration
 * defaultMemoryScaling: 1.0     # memory oversubscription on those nodes
 * tenants:                      # namespaces -> tenants; a namespace not listed is a tenant of its own
 *   - name: vision
 *     namespaces: [vision, vision-dev]
 *     weight: 2
 *     guaranteedGpus: 8
 *     limitGpus: 16
 * </pre>
 */
public record K8sConfig(String schedulerName, String policy, PlacementConfig placement, int defaultSplitCount,
                        double defaultMemoryScaling, Map<String, TenantConfig> tenants, Map<String, String> tenantOfNamespace) {

    public static K8sConfig defaults() {
        return new K8sConfig("gpupool", "fair-share", PlacementConfig.defaults(), NodeSpec.DEFAULT_SPLIT_COUNT, 1.0, Map.of(), Map.of());
    }

    /** File shape; every field optional. */
    record File(String schedulerName, String policy, String placement, Integer defaultSplitCount, Double defaultMemoryScaling,
                List<Tenant> tenants) {}

    record Tenant(String name, List<String> namespaces, Double weight, Double guaranteedGpus, Double limitGpus) {}

    public static K8sConfig load(Path path) throws NoSuchFileException {
        if (!Files.isRegularFile(path)) throw new NoSuchFileException(path.toString());
        ObjectMapper yaml = YAMLMapper.builder().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();
        File f;
        try {
            f = yaml.readValue(path.toFile(), File.class);
        } catch (JacksonException e) {
            throw badFile(path, e);
        }
        return from(f == null ? new File(null, null, null, null, null, null) : f, path.toString());
    }

    /** The file, line and field of a YAML error (the YAML reader does not always know the line: the key's line then). */
    private static SpecException badFile(Path path, JacksonException e) {
        StringBuilder field = new StringBuilder();
        String lastKey = null;
        for (var ref : e.getPath()) {
            if (ref.getPropertyName() != null) {
                if (!field.isEmpty()) field.append('.');
                field.append(ref.getPropertyName());
                lastKey = ref.getPropertyName();
            } else if (ref.getIndex() >= 0) {
                field.append('[').append(ref.getIndex()).append(']');
            }
        }
        int line = e.getLocation() != null ? e.getLocation().getLineNr() : -1;
        if (line <= 0 && lastKey != null) {
            try {
                List<String> lines = Files.readAllLines(path);
                java.util.regex.Pattern key = java.util.regex.Pattern.compile("^\\s*(-\\s*)?" + java.util.regex.Pattern.quote(lastKey) + "\\s*:");
                for (int i = 0; i < lines.size() && line <= 0; i++) if (key.matcher(lines.get(i)).find()) line = i + 1;
            } catch (java.io.IOException ignored) {
                // the file was read a moment ago; without the line the message still names the field
            }
        }
        String rule = e instanceof tools.jackson.databind.exc.UnrecognizedPropertyException u
                ? "unknown setting '" + u.getPropertyName() + "'; known: " + u.getKnownPropertyIds()
                : e.getOriginalMessage();
        return new SpecException(path + (line > 0 ? ":" + line : ""), field.isEmpty() ? null : field.toString(), rule);
    }

    static K8sConfig from(File f, String where) {
        K8sConfig d = defaults();
        String name = f.schedulerName() == null ? d.schedulerName() : f.schedulerName();
        if (name.isBlank()) throw new SpecException(where, "schedulerName", "must not be empty");
        String policy = f.policy() == null ? d.policy() : f.policy();
        PlacementConfig placement = f.placement() == null ? d.placement() : PlacementConfig.parse(f.placement());
        int split = f.defaultSplitCount() == null ? d.defaultSplitCount() : f.defaultSplitCount();
        if (split < 1) throw new SpecException(where, "defaultSplitCount", "must be >= 1, got " + split);
        double scaling = f.defaultMemoryScaling() == null ? d.defaultMemoryScaling() : f.defaultMemoryScaling();
        if (!(scaling >= 1.0) || scaling > 16) throw new SpecException(where, "defaultMemoryScaling", "must be in [1, 16], got " + scaling);
        Map<String, TenantConfig> tenants = new LinkedHashMap<>();
        Map<String, String> ofNamespace = new HashMap<>();
        List<Tenant> list = f.tenants() == null ? List.of() : f.tenants();
        for (int i = 0; i < list.size(); i++) {
            Tenant t = list.get(i);
            String at = where + " tenants[" + i + "]";
            if (t.name() == null || t.name().isBlank()) throw new SpecException(at, "name", "must be set");
            if (tenants.containsKey(t.name())) throw new SpecException(at, "name", "tenant '" + t.name() + "' appears twice");
            tenants.put(t.name(), new TenantConfig(t.name(), t.weight() == null ? 1.0 : t.weight(),
                    t.guaranteedGpus() == null ? 0 : t.guaranteedGpus(), t.limitGpus() == null ? 0 : t.limitGpus()));
            for (String ns : t.namespaces() == null ? List.of(t.name()) : t.namespaces()) {
                String prev = ofNamespace.put(ns, t.name());
                if (prev != null) throw new SpecException(at, "namespaces", "namespace '" + ns + "' already belongs to tenant " + prev);
            }
        }
        K8sConfig c = new K8sConfig(name, policy, placement, split, scaling, tenants, ofNamespace);
        c.schedulerConfig();   // checks the policy name
        return c;
    }

    public K8sConfig {
        tenants = Map.copyOf(tenants);
        tenantOfNamespace = Map.copyOf(tenantOfNamespace);
    }

    /** The tenant a namespace's pods are charged to. */
    public String tenantOf(String namespace) {
        return tenantOfNamespace.getOrDefault(namespace, namespace);
    }

    public SchedulerConfig schedulerConfig() {
        return SchedulerConfig.defaults(policy).withPlacement(placement).withTenants(tenants);
    }

    public K8sConfig withSchedulerName(String n) {
        return new K8sConfig(n, policy, placement, defaultSplitCount, defaultMemoryScaling, tenants, tenantOfNamespace);
    }

    public K8sConfig withPolicy(String p) {
        K8sConfig c = new K8sConfig(schedulerName, p, placement, defaultSplitCount, defaultMemoryScaling, tenants, tenantOfNamespace);
        c.schedulerConfig();
        return c;
    }
}
