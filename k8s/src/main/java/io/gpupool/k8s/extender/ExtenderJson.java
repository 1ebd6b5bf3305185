package io.gpupool.k8s.extender;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import tools.jackson.core.SerializableString;
import tools.jackson.core.io.CharacterEscapes;
import tools.jackson.core.io.SerializedString;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

import java.io.InputStream;

/**
 * JSON as Go's encoding/json reads and writes the extender messages: keys matched case-insensitively
 * (an exact match first), unknown keys ignored, map keys written in sorted order, and {@code <}, {@code >},
 * {@code &}, U+2028 and U+2029 written as {@code \u003c}-style escapes. Kubernetes objects inside go through
 * fabric8's serialization, so they read and write as the API server's JSON.
 */
public final class ExtenderJson {
    private final KubernetesSerialization serialization;

    public ExtenderJson() {
        JsonFactory factory = JsonFactory.builder().characterEscapes(new GoEscapes()).build();
        JsonMapper mapper = JsonMapper.builder(factory)
                .enable(MapperFeature.ACCEPT_CASE_INSENSITIVE_PROPERTIES)
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
                .disable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
                .build();
        this.serialization = new KubernetesSerialization(mapper, false);
    }

    public <T> T read(InputStream in, Class<T> type) {
        return serialization.unmarshal(in, type);
    }

    public <T> T read(String json, Class<T> type) {
        return serialization.unmarshal(json, type);
    }

    public String write(Object value) {
        return serialization.asJson(value);
    }

    /** Go's json.Marshal escapes these for safe embedding in HTML. */
    private static final class GoEscapes extends CharacterEscapes {
        private final int[] ascii;

        GoEscapes() {
            ascii = standardAsciiEscapesForJSON();
            ascii['<'] = ESCAPE_CUSTOM;
            ascii['>'] = ESCAPE_CUSTOM;
            ascii['&'] = ESCAPE_CUSTOM;
        }

        @Override public int[] getEscapeCodesForAscii() { return ascii; }

        @Override
        public SerializableString getEscapeSequence(int ch) {
            return switch (ch) {
                case '<', '>', '&', 0x2028, 0x2029 -> new SerializedString(String.format("\\u%04x", ch));
                default -> null;
            };
        }
    }
}
