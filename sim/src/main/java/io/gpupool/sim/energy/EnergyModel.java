package io.gpupool.sim.energy;

import io.gpupool.model.GpuModel;
import io.gpupool.model.SpecException;

/**
 * What a GPU draws in the simulator, from the catalog's power figures ({@link GpuModel#idleWatts()},
 * {@link GpuModel#tdpWatts()}) and one assumption, the utilization {@code u} of a busy GPU:
 * <pre>
 *   a GPU of a powered-on node, granted g of its 1000 thousandths:  idle + u x (TDP - idle) x g / 1000
 * </pre>
 * so an idle GPU draws its idle power, a whole busy GPU {@code idle + u x (TDP - idle)}, and a fractional grant adds
 * its share of the GPU's dynamic power. A job is charged, per grant, {@code g / 1000 x (idle + u x (TDP - idle))}: its
 * share of the idle power and its dynamic power; the rest of the idle power is the pool's idle energy. Only GPUs:
 * CPUs, memory, fans and the network are not modelled.
 *
 * @param utilization {@code u}, 0..1: how far from idle to TDP a busy GPU draws, on average over its run
 */
public record EnergyModel(double utilization) {
    /** The default assumption (docs/architecture.md, "Energy"). */
    public static final double DEFAULT_UTILIZATION = 0.8;
    public static final EnergyModel DEFAULT = new EnergyModel(DEFAULT_UTILIZATION);

    public EnergyModel {
        if (!(utilization >= 0 && utilization <= 1)) {
            throw new SpecException("--energy-util", "utilization", "must be a number in 0..1, got " + utilization);
        }
    }

    /** Watts of one GPU of this model, powered on and running nothing. */
    public double idleWatts(GpuModel m) {
        return m.idleWatts();
    }

    /** Watts one whole GPU adds over its idle power while busy. */
    public double dynamicWatts(GpuModel m) {
        return utilization * Math.max(0, m.tdpWatts() - m.idleWatts());
    }

    /** Watts of one whole busy GPU. */
    public double busyWatts(GpuModel m) {
        return idleWatts(m) + dynamicWatts(m);
    }
}
