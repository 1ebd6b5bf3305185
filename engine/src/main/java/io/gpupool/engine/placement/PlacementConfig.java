package io.gpupool.engine.placement;

import io.gpupool.model.SpecException;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Which scorers rank nodes and with what weight, which GPU policy picks GPUs inside a node, and how
 * many feasible nodes are scored per replica (kube-scheduler's percentageOfNodesToScore: the index
 * visits the most promising nodes first, so a bounded sample keeps a decision cheap on a big pool).
 *
 * @param scorerWeights  scorer name -> weight (> 0), in order
 * @param gpuPolicy      GPU-level policy name, or null for the first scorer's default
 * @param candidateLimit feasible nodes scored per replica; 0 = all
 */
public record PlacementConfig(Map<String, Double> scorerWeights, String gpuPolicy, int candidateLimit) {
    public static final int DEFAULT_CANDIDATE_LIMIT = 32;

    public PlacementConfig {
        if (scorerWeights.isEmpty()) throw new SpecException("placement", "scorers", "at least one scorer is needed");
        for (var e : scorerWeights.entrySet()) {
            PlacementPlugins.scorer(e.getKey());
            if (!(e.getValue() > 0)) throw new SpecException("placement", e.getKey(), "weight must be > 0, got " + e.getValue());
        }
        if (gpuPolicy != null) PlacementPlugins.gpuPolicy(gpuPolicy);
        if (candidateLimit < 0) throw new SpecException("placement", "candidate-limit", "must be >= 0, got " + candidateLimit);
        scorerWeights = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(scorerWeights));
    }

    /** binpack with topology: pack nodes, keep replicas inside NVLink domains. */
    public static PlacementConfig defaults() {
        return parse("binpack,topology");
    }

    /**
     * Parses {@code name[:weight][,name[:weight]...][;gpu=POLICY][;limit=N]}, e.g. {@code fgd},
     * {@code binpack:2,topology:1}, {@code spread;gpu=binpack;limit=0}.
     */
    public static PlacementConfig parse(String text) {
        if (text == null || text.isBlank()) throw new SpecException("placement", "placement", "must not be empty");
        String[] parts = text.trim().split(";");
        Map<String, Double> weights = new LinkedHashMap<>();
        for (String item : parts[0].split(",")) {
            String s = item.trim();
            if (s.isEmpty()) throw new SpecException("placement '" + text + "'", "scorers", "empty scorer name");
            int colon = s.indexOf(':');
            String name = colon < 0 ? s : s.substring(0, colon).trim();
            double w = 1.0;
            if (colon >= 0) {
                try {
                    w = Double.parseDouble(s.substring(colon + 1).trim());
                } catch (NumberFormatException e) {
                    throw new SpecException("placement '" + text + "'", name, "weight must be a number, got '" + s.substring(colon + 1) + "'");
                }
            }
            if (weights.put(name.toLowerCase(java.util.Locale.ROOT), w) != null) {
                throw new SpecException("placement '" + text + "'", name, "scorer named twice");
            }
        }
        String gpu = null;
        int limit = DEFAULT_CANDIDATE_LIMIT;
        for (int i = 1; i < parts.length; i++) {
            String opt = parts[i].trim();
            if (opt.startsWith("gpu=")) gpu = opt.substring(4).trim();
            else if (opt.startsWith("limit=")) {
                try {
                    limit = Integer.parseInt(opt.substring(6).trim());
                } catch (NumberFormatException e) {
                    throw new SpecException("placement '" + text + "'", "limit", "must be an integer, got '" + opt.substring(6) + "'");
                }
            } else throw new SpecException("placement '" + text + "'", opt, "unknown option; use gpu=POLICY or limit=N");
        }
        return new PlacementConfig(weights, gpu, limit);
    }

    public PlacementConfig withCandidateLimit(int limit) {
        return new PlacementConfig(scorerWeights, gpuPolicy, limit);
    }

    /**
     * The shorthand that {@link #parse} reads back to an equal config, e.g. {@code binpack:2,topology;gpu=fgd;limit=8}
     * (whole weights without a fraction; weight 1, no GPU policy and the default limit left out).
     */
    public String shorthand() {
        StringBuilder sb = new StringBuilder();
        scorerWeights.forEach((k, v) -> {
            if (!sb.isEmpty()) sb.append(',');
            sb.append(k);
            if (v != 1.0) sb.append(':').append(v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString(v.longValue()) : v.toString());
        });
        if (gpuPolicy != null) sb.append(";gpu=").append(gpuPolicy);
        if (candidateLimit != DEFAULT_CANDIDATE_LIMIT) sb.append(";limit=").append(candidateLimit);
        return sb.toString();
    }

    /** The name a report shows: the scorer list as given. */
    public String label() {
        StringBuilder sb = new StringBuilder();
        scorerWeights.forEach((k, v) -> {
            if (!sb.isEmpty()) sb.append(',');
            sb.append(k);
            if (v != 1.0) sb.append(':').append(v);
        });
        return sb.toString();
    }
}
