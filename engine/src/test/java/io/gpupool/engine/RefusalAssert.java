package io.gpupool.engine;

import io.gpupool.engine.status.Code;
import io.gpupool.engine.status.Resource;
import io.gpupool.engine.status.Status;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Asserts what a refusal says as data (code, plugin, resource, amounts), never its English. */
public final class RefusalAssert {
    private RefusalAssert() {}

    /** The status is this refusal; {@code amounts}, when given, are requested, free and capacity. */
    public static void assertRefusal(Status s, Code code, String plugin, Resource resource, long... amounts) {
        assertThat(s).as("a refusal").isNotNull();
        assertThat(List.of(s.code(), s.plugin(), s.resource())).as(s.message()).containsExactly(code, plugin, resource);
        if (amounts.length > 0) {
            assertThat(new long[] {s.requested(), s.free(), s.capacity()}).as("requested, free, capacity of: " + s.message()).containsExactly(amounts);
        }
    }
}
