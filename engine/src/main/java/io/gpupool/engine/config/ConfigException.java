package io.gpupool.engine.config;

import io.gpupool.model.SpecException;

/**
 * A configuration tree breaks a rule: {@code SOURCE[:LINE]: field 'PATH': RULE}, e.g.
 * {@code pool.yaml:7: field 'policy.args.thresholdsGpuSec[1]': must be greater than 3600 ...}. The path is the
 * place in the tree (dots between keys, [i] for list entries), the same for a YAML file and a JSON body.
 */
public final class ConfigException extends SpecException {
    /** Whether a value has the wrong form (a list where a number belongs, an unknown key) or breaks a rule of its own. */
    public enum Kind { SHAPE, VALUE }

    private final String source;
    private final int line;
    private final Kind kind;

    public ConfigException(String source, int line, String path, Kind kind, String rule) {
        super(line > 0 ? source + ":" + line : source, path == null || path.isEmpty() ? null : path, rule);
        this.source = source;
        this.line = line;
        this.kind = kind;
    }

    /** The file name, or what else the tree came from (a request body, the command line). */
    public String source() { return source; }

    /** 1-based line in the source; 0 when the source has no lines (a JSON body, a value given in code). */
    public int line() { return line; }

    public Kind kind() { return kind; }

    /** The place in the tree; empty for the whole tree. */
    public String path() { return field() == null ? "" : field(); }
}
