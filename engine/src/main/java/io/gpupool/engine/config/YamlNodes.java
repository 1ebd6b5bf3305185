package io.gpupool.engine.config;

import io.gpupool.engine.config.ConfigNode.Mapping;
import io.gpupool.engine.config.ConfigNode.Scalar;
import io.gpupool.engine.config.ConfigNode.Sequence;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.constructor.StandardConstructor;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** YAML's composed nodes to {@link ConfigNode}s, with their lines. */
final class YamlNodes {
    private YamlNodes() {}

    static ConfigNode node(Node n, String source, String path, int depth) {
        int line = n.getStartMark().map(m -> m.getLine() + 1).orElse(0);
        if (depth > ConfigNode.MAX_DEPTH) throw new ConfigException(source, line, path, ConfigException.Kind.SHAPE, "is nested too deeply");
        return switch (n) {
            case MappingNode mn -> {
                Map<String, ConfigNode> entries = new LinkedHashMap<>();
                Map<String, Integer> keyLines = new LinkedHashMap<>();
                for (NodeTuple t : mn.getValue()) {
                    Node k = t.getKeyNode();
                    int keyLine = k.getStartMark().map(m -> m.getLine() + 1).orElse(line);
                    if (!(k instanceof ScalarNode ks)) {
                        throw new ConfigException(source, keyLine, path, ConfigException.Kind.SHAPE, "keys must be plain names");
                    }
                    String key = ks.getValue();
                    if (entries.containsKey(key)) {
                        throw new ConfigException(source, keyLine, ConfigNode.child(path, key), ConfigException.Kind.SHAPE, "is given twice");
                    }
                    keyLines.put(key, keyLine);
                    entries.put(key, node(t.getValueNode(), source, ConfigNode.child(path, key), depth + 1));
                }
                yield new Mapping(entries, keyLines, source, line);
            }
            case SequenceNode sn -> {
                List<ConfigNode> items = new ArrayList<>();
                for (int i = 0; i < sn.getValue().size(); i++) items.add(node(sn.getValue().get(i), source, ConfigNode.index(path, i), depth + 1));
                yield new Sequence(items, source, line);
            }
            case ScalarNode sn -> new Scalar(scalar(sn, source, path, line), source, line);
            default -> throw new ConfigException(source, line, path, ConfigException.Kind.SHAPE, "is not a value this reader knows");
        };
    }

    /** The scalar as YAML 1.2's core schema reads it: int, float, bool, null or text. */
    private static Object scalar(ScalarNode n, String source, String path, int line) {
        Object v;
        try {
            v = new StandardConstructor(LoadSettings.builder().build()).constructSingleDocument(Optional.of(n));
        } catch (YamlEngineException e) {
            throw new ConfigException(source, line, path, ConfigException.Kind.SHAPE, "cannot be read: " + e.getMessage());
        }
        if (v == null || v instanceof String || v instanceof Number || v instanceof Boolean) return v;
        throw new ConfigException(source, line, path, ConfigException.Kind.SHAPE, "must be text, a number or true/false");
    }
}
