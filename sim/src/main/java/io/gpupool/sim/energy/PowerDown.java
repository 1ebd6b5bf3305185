package io.gpupool.sim.energy;

import io.gpupool.engine.config.Durations;
import io.gpupool.model.SpecException;

/**
 * Powering idle nodes down and up on demand, as Helios' CES does ({@code simulate --power-down}): a node no job has
 * used for {@code idleMs} powers off and then draws {@code offWatts}; a job that cannot be placed on the powered-on
 * nodes wakes as few as it needs, each usable {@code wakeMs} after the wake began. The first {@code keep} nodes of the
 * pool never power down.
 *
 * @param idleMs   how long a node stays idle before it powers off (> 0)
 * @param wakeMs   from the wake-up to the node taking work (>= 0)
 * @param keep     the first {@code keep} nodes of the pool stay on
 * @param offWatts what a powered-off node draws (its management controller; 0 by default)
 */
public record PowerDown(long idleMs, long wakeMs, int keep, double offWatts) {
    public static final String OPTION = "--power-down";

    public PowerDown {
        if (idleMs <= 0) throw new SpecException(OPTION, "idle", "must be a duration > 0, e.g. 30m");
        if (wakeMs < 0) throw new SpecException(OPTION, "wake", "must be a duration >= 0, e.g. 5m");
        if (keep < 0) throw new SpecException(OPTION, "keep", "must be a number of nodes >= 0, got " + keep);
        if (!(offWatts >= 0) || Double.isInfinite(offWatts)) throw new SpecException(OPTION, "off", "must be watts >= 0, got " + offWatts);
    }

    /** {@code idle=DURATION,wake=DURATION[,keep=N][,off=WATTS]}; durations as {@code 90s}, {@code 30m}, {@code 1h} or seconds. */
    public static PowerDown parse(String text) {
        Long idle = null, wake = null;
        int keep = 0;
        double off = 0;
        for (String part : text.split(",")) {
            String[] kv = part.split("=", 2);
            String key = kv[0].trim();
            if (kv.length != 2 || kv[1].isBlank()) {
                throw new SpecException(OPTION, key.isEmpty() ? "power-down" : key, "expected key=value (idle, wake, keep, off), got '" + part.trim() + "'");
            }
            String value = kv[1].trim();
            switch (key) {
                case "idle" -> idle = Durations.parseMs(value, OPTION, "idle");
                case "wake" -> wake = value.matches("0+(\\.0*)?(ms|s|m|h|d)?") ? 0L : Durations.parseMs(value, OPTION, "wake");
                case "keep" -> keep = integer(value, "keep");
                case "off" -> off = number(value, "off");
                default -> throw new SpecException(OPTION, key, "unknown parameter; known: idle, wake, keep, off");
            }
        }
        if (idle == null) throw new SpecException(OPTION, "idle", "is required: how long a node stays idle before it powers off, e.g. idle=30m");
        if (wake == null) throw new SpecException(OPTION, "wake", "is required: how long a node takes to wake up, e.g. wake=5m");
        return new PowerDown(idle, wake, keep, off);
    }

    /** As given on the command line, for reports. */
    public String describe() {
        return "idle=" + Durations.format(idleMs) + ",wake=" + (wakeMs == 0 ? "0" : Durations.format(wakeMs)) + (keep > 0 ? ",keep=" + keep : "")
                + (offWatts > 0 ? ",off=" + (offWatts == Math.rint(offWatts) ? String.valueOf((long) offWatts) : String.valueOf(offWatts)) : "");
    }

    private static int integer(String v, String field) {
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new SpecException(OPTION, field, "must be a whole number, got '" + v + "'");
        }
    }

    private static double number(String v, String field) {
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new SpecException(OPTION, field, "must be a number, got '" + v + "'");
        }
    }
}
