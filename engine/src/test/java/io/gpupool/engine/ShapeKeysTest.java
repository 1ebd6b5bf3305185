package io.gpupool.engine;

import io.gpupool.model.GpuShare;
import io.gpupool.model.JobSpec;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static io.gpupool.engine.TestPools.job;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's shape keys, found by the shape's fields: the text is the one each job would make, jobs whose fields are
 * equal get one string (from distinct spec objects), and jobs that differ in any field the key is made of do not.
 */
class ShapeKeysTest {
    private static List<JobSpec> variants() {
        List<JobSpec> v = new ArrayList<>();
        v.add(job("whole", 2).build());
        v.add(job("gang", 4).shape(2, 2).build());
        v.add(job("flat", 4).shape(1, 4).build());
        v.add(job("share", 1).share(new GpuShare(500, 0)).build());
        v.add(job("share-mem", 1).share(new GpuShare(500, 8192)).build());
        v.add(job("nvlink", 2).requireNvlink(true).build());
        v.add(job("models", 2).allowedModels(Set.of("V100-32GB", "A100-80GB")).build());
        v.add(job("host", 2).host(4000, 16384).build());
        v.add(job("host-cpu", 2).host(8000, 16384).build());
        return v;
    }

    @Test
    void oneStringPerShapeWithTheTextEachJobWouldMake() {
        ShapeKeys keys = new ShapeKeys();
        List<JobSpec> first = variants();
        List<String> made = new ArrayList<>();
        for (JobSpec s : first) {
            String k = keys.of(s);
            assertThat(k).as(s.id()).isEqualTo(JobState.shapeKeyOf(s));
            made.add(k);
        }
        assertThat(made).as("every field tells shapes apart").doesNotHaveDuplicates();
        List<JobSpec> again = variants();   // new spec objects, equal fields
        for (int i = 0; i < again.size(); i++) assertThat(keys.of(again.get(i))).as(again.get(i).id()).isSameAs(made.get(i));
    }

    @Test
    void fieldsThatPrintAlikeKeepTheirOwnString() {
        ShapeKeys keys = new ShapeKeys();
        JobSpec one = job("one", 1).allowedModels(Set.of("a, b")).build();
        JobSpec two = job("two", 1).allowedModels(Set.of("a", "b")).build();
        // the workload profile tells shapes apart by the key's identity: one string for both would merge their counts
        assertThat(keys.of(one)).isEqualTo(keys.of(two)).isNotSameAs(keys.of(two));
    }
}
