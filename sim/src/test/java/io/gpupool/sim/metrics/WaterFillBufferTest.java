package io.gpupool.sim.metrics;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** The recorder water-fills into one reused order buffer: every instant's shares must be those of a fresh buffer. */
class WaterFillBufferTest {

    @Test
    void aReusedDirtyBufferGivesTheFreshShares() {
        Random rnd = new Random(16);
        int[] buffer = new int[100];
        for (int trial = 0; trial < 2000; trial++) {
            int tenants = 1 + rnd.nextInt(trial % 10 == 0 ? 90 : 12);   // some above 64: the boxed sort
            int[] active = new int[tenants];
            long[] demand = new long[tenants];
            double[] weight = new double[tenants];
            int count = 0;
            for (int t = 0; t < tenants; t++) {
                demand[t] = rnd.nextInt(5) * 1000L + rnd.nextInt(3) * 500L;
                weight[t] = 0.5 + rnd.nextInt(4);
                if (rnd.nextBoolean()) active[count++] = t;
            }
            double capacity = 1000.0 * rnd.nextInt(1, 20);
            double[] fresh = new double[tenants], reused = new double[tenants];
            FairnessWindows.waterFill(capacity, active, count, demand, weight, fresh);
            Arrays.fill(buffer, rnd.nextInt(tenants));   // what an earlier instant left there
            FairnessWindows.waterFill(capacity, active, count, demand, weight, reused, buffer);
            assertThat(reused).as("trial %d", trial).containsExactly(fresh);
        }
    }
}
